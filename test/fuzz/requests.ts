/**
 * Request generators for every operation in the route table: each generated request pairs an arbitrary
 * (arbitraries.ts) with the oracle's expectation for it (oracle.ts); exchange.ts sends it and checks the answer.
 */
import fc from 'fast-check';
import { badAuth, contentType, createBody } from './arbitraries.ts';
import { RAW_QUERIES, listPairs, petIdSegment, UNDECLARED_METHODS } from './arbitraries-paths.ts';
import { describe, type FuzzRequest } from './exchange.ts';
import { resourcesWithAllow } from '../helpers/samples.ts';
import { sampleArm } from './route-samples.ts';
import { createExpectation, getExpectation, listExpectation, type Pair, type World } from './oracle.ts';

/** Form-encodes like URLSearchParams, but keeps every pair (duplicates included) in the order given. */
const encodePairs = (pairs: readonly Pair[]) =>
  pairs.map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`).join('&');

// ---------------------------------------------------------------------------------------------- all operations

/** One generated request against any operation, with the oracle's expectation. */
export function anyRequest(world: World): fc.Arbitrary<FuzzRequest> {
  const auth = { Authorization: `Bearer ${world.keys.reads}` };
  const postAuth = { Authorization: `Bearer ${world.keys.writes}` };

  const create = fc.tuple(createBody, contentType).map(([body, ct]): FuzzRequest => {
    const { expect, why } = createExpectation(body, ct);
    return {
      method: 'POST',
      path: '/pets',
      headers: { ...postAuth, ...(ct === undefined ? {} : { 'Content-Type': ct }) },
      body,
      expect,
      why,
    };
  });

  const list = fc
    .oneof(
      { weight: 9, arbitrary: listPairs(world).map((pairs) => ({ pairs, raw: undefined as string | undefined })) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES).map((raw) => ({ pairs: [] as Pair[], raw })) },
    )
    .map(({ pairs, raw }): FuzzRequest => {
      if (raw !== undefined) {
        // The oracle reads raw queries the way a URL parser does (WHATWG: lenient percent-decoding).
        const parsed = [...new URLSearchParams(raw.slice(1))] as Pair[];
        return { method: 'GET', path: `/pets${raw}`, headers: auth, ...listExpectation(parsed, world) };
      }
      const q = encodePairs(pairs);
      return { method: 'GET', path: `/pets${q ? `?${q}` : ''}`, headers: auth, ...listExpectation(pairs, world) };
    });

  const get = petIdSegment(world).map((seg): FuzzRequest => ({
    method: 'GET',
    path: `/pets/${seg}`,
    headers: auth,
    ...getExpectation(seg, world),
  }));

  const orders = listPairs(world).map((pairs): FuzzRequest => {
    const q = encodePairs(pairs);
    return {
      method: 'GET',
      path: `/store/orders${q ? `?${q}` : ''}`,
      headers: auth,
      // It declares no query parameter: any is refused by name before the operation answers.
      ...(pairs.length
        ? { expect: { status: 400, code: 'validation_failed' }, why: 'no query parameters declared' }
        : { expect: { status: 501, code: 'not_implemented' }, why: 'contract not specified' }),
    };
  });

  // Each resource with a method it does not declare: derived from the routes, so a new method never lands here.
  const wrongMethod = fc
    .tuple(
      fc
        .constantFrom(...resourcesWithAllow())
        .chain((r) =>
          fc
            .constantFrom(...UNDECLARED_METHODS.filter((m) => !(r.methods as string[]).includes(m)))
            .map((m) => ({ ...r, method: m })),
        ),
      fc.boolean(),
    )
    .map(([{ path, allow, method }, withKey]): FuzzRequest => ({
      method,
      path,
      headers: withKey ? auth : {},
      expect: { status: 405, code: 'method_not_allowed', allow },
      why: 'undeclared method',
    }));

  const unknownPath = fc
    .constantFrom('/', '/pet', '/pets/1/x', '/PETS', '/store', '/store/orders/1', '/v1/pets', '/pets/1/2/3')
    .map((path): FuzzRequest => ({
      method: 'GET',
      path,
      headers: auth,
      expect: { status: 404, code: 'not_found' },
      why: 'no route',
    }));

  const operation = fc.oneof(
    { weight: 40, arbitrary: create },
    { weight: 28, arbitrary: list },
    { weight: 20, arbitrary: get },
    { weight: 3, arbitrary: orders },
    { weight: 5, arbitrary: wrongMethod },
    { weight: 2, arbitrary: unknownPath },
    // Every route from its sample: what a new operation gets with no edit here.
    { weight: 6, arbitrary: sampleArm(world.samples, world.keys) },
  );

  // Now and then the same request with bad credentials: 401 wherever a route matches, before any other check.
  return (
    fc
      .tuple(
        operation,
        fc.oneof(
          { weight: 11, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: badAuth(world.keys.reads) },
        ),
      )
      .map(([r, bad]): FuzzRequest => {
        const routed =
          r.expect.status !== 405 &&
          !(
            r.expect.status === 404 &&
            r.why !== 'no such pet' &&
            r.why !== 'existing pet' &&
            !r.why.startsWith('sample')
          );
        if (!bad || !routed) return r;
        const { Authorization: _, ...rest } = r.headers;
        return {
          ...r,
          headers: { ...rest, ...bad },
          expect: { status: 401, code: 'unauthorized' },
          why: `bad credentials (${JSON.stringify(bad).slice(0, 60)})`,
        };
      })
      // fast-check prints counterexamples with this: one short line per request instead of closures and 30 KB bodies.
      .map((r) => Object.assign(r, { [fc.toStringMethod]: () => describe(r) }))
  );
}
