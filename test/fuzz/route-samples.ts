/**
 * What the fuzz run and the stateful test know of every operation without a word of their own: its sample request
 * (test/helpers/samples.ts) and its route entry. The hand-written oracles (oracle.ts, stateful.test.ts) judge the
 * pets operations from the spec; these arms cover every route the same way, so a new operation is fuzzed, and a new
 * resource's create and read are checked against a model, with no edit here.
 *
 * The path-parameter arm asks the route's own schema whether a segment is well formed: the one place these arms
 * lean on the service's code, where the hand-written oracle (getExpectation) writes the rule out.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ROUTES, createAndRead, writes, type OperationId, type Route } from '../../contract/routes.ts';
import {
  OPERATION_SAMPLES,
  fixturesSending,
  requestInit,
  sampleRequests,
  type OperationSample,
  type SampleRequest,
} from '../helpers/samples.ts';
import type { TestApi } from '../helpers/api.ts';
import type { FuzzRequest } from './exchange.ts';

/** Every operation's sample request, made (with what it names) with `key`. */
export const routeSamples = (api: TestApi, key: string): Promise<SampleRequest[]> =>
  sampleRequests(fixturesSending(async (r) => (await api.call(r.path, { ...requestInit(r), key })).json()));

const routeOf = (operationId: OperationId): Route => ROUTES.find((r) => r.operationId === operationId)!;

/** Path segments no well-formed id is (and some that are), each judged by the route's parameter schema. */
const SEGMENTS = ['x', '-1', '1.5', '1e3', '0x10', '%20', '%E2%9C%93', '00', '0', '9007199254740993', '1'.repeat(40)];

/** What the sample's route answers a segment in place of `name`: 400 when its schema refuses it, else 404 or ok. */
function segmentExpectation(route: Route, name: string, segment: string): FuzzRequest['expect'] {
  const params = route.request.params as { safeParse(v: unknown): { success: boolean } } | undefined;
  const ok = params?.safeParse({ [name]: decodeURIComponent(segment) }).success ?? false;
  // A well-formed id the fixtures did not make names nothing: assigned ids are 1..2^53-1, made in order.
  return ok ? { status: 404, code: 'not_found' } : { status: 400, code: 'validation_failed' };
}

/** Generated requests from each sample: as is, with an undeclared query parameter, a bad id, a bad body. */
export function sampleArm(samples: readonly SampleRequest[], keys: { reads: string; writes: string }) {
  // By what the operation declares it does, not its method: a read sent as a POST still counts on the reading key.
  const auth = (r: SampleRequest) => ({
    Authorization: `Bearer ${writes(routeOf(r.operationId)) ? keys.writes : keys.reads}`,
  });
  const as = (r: SampleRequest, why: string, over: Partial<FuzzRequest> & Pick<FuzzRequest, 'expect'>) => ({
    method: r.method,
    path: r.path,
    headers: { ...r.headers, ...auth(r) },
    ...(r.body === undefined ? {} : { body: r.body }),
    why: `sample ${r.operationId}: ${why}`,
    ...over,
  });
  const variants = (r: SampleRequest): FuzzRequest[] => {
    const route = routeOf(r.operationId);
    const out: FuzzRequest[] = [
      as(r, 'as documented', { expect: { status: r.status } }),
      as(r, 'an undeclared query parameter', {
        path: `${r.path}${r.path.includes('?') ? '&' : '?'}FuzzTypo=1`,
        expect: { status: 400, code: 'validation_failed' },
      }),
    ];
    for (const [name, value] of Object.entries(r.pathParameters))
      for (const segment of SEGMENTS.filter((s) => s !== value))
        out.push(
          as(r, `${name}=${segment}`, {
            path: r.path.replace(`/${encodeURIComponent(value)}`, `/${segment}`),
            expect: segmentExpectation(route, name, segment),
          }),
        );
    if (r.body !== undefined) {
      const body = JSON.parse(r.body) as Record<string, unknown>;
      out.push(
        as(r, 'an unknown body field', {
          body: JSON.stringify({ ...body, fuzzUnknown: 1 }),
          expect: { status: 400, code: 'validation_failed' },
        }),
        as(r, 'a body that is not JSON', { body: r.body.slice(0, -1), expect: { status: 400, code: 'invalid_json' } }),
        as(r, 'a body sent as text/plain', {
          headers: { ...r.headers, ...auth(r), 'Content-Type': 'text/plain' },
          expect: { status: 415, code: 'unsupported_media_type' },
        }),
        ...Object.keys(body).map((field) =>
          as(r, `${field} of the wrong type`, {
            body: JSON.stringify({ ...body, [field]: { fuzz: [] } }),
            expect: { status: 400, code: 'validation_failed' },
          }),
        ),
      );
    }
    return out;
  };
  // A header a sample makes afresh each time (an Idempotency-Key) is made afresh for each generated request too:
  // two copies of one create in a batch would otherwise meet as a retry in flight (409).
  const freshOf = (op: OperationId): OperationSample['headers'] => (OPERATION_SAMPLES[op] as OperationSample).headers;
  const all = samples.flatMap((s) => variants(s).map((r) => ({ r, fresh: freshOf(s.operationId) })));
  return fc
    .constantFrom(...all)
    .map(({ r, fresh }): FuzzRequest => (fresh ? { ...r, headers: { ...r.headers, ...fresh() } } : r));
}

/** A create (201 + Location) and the read of what it made (a read of `<path>/{id}`), paired from the route table. */
export interface CreateAndRead {
  readonly create: OperationId;
  readonly read: OperationId;
}
export const CREATE_AND_READ: readonly CreateAndRead[] = createAndRead().map(({ create, read }) => ({
  create: create.operationId as OperationId,
  read: read.operationId as OperationId,
}));

/** The stateful test's model of what the generic commands made: each item's body, by its Location. */
export type Made = Map<string, unknown>;

/** Sends the creator's sample: 201, a Location of the read's form, and the body the read must give back. */
export async function createBySample(api: TestApi, key: string, sample: SampleRequest, made: Made): Promise<unknown> {
  const res = await api.call(sample.path, { ...requestInit(sample), key });
  const body = (await res.json()) as unknown;
  const location = res.headers.get('location') ?? '';
  if (res.status === 201) made.set(location, body);
  expect(res.status, sample.operationId).toBe(201);
  expect(location, sample.operationId).toMatch(/^\/v1\/.+\/\d+$/);
  return body;
}

/** Reads a made item back by its Location (200, as created), or an id nothing was made under (404). */
export async function readBack(api: TestApi, key: string, made: Made, pick: number | undefined): Promise<void> {
  const locations = [...made.keys()];
  const known = pick === undefined ? undefined : locations[pick % locations.length];
  const path = (known ?? locations[0]!.replace(/\d+$/, String(Number.MAX_SAFE_INTEGER))).replace(/^\/v1/, '');
  const res = await api.call(path, { key });
  if (known === undefined) expect(res.status, path).toBe(404);
  else {
    expect(res.status, path).toBe(200);
    expect(await res.json(), path).toEqual(made.get(known));
  }
}
