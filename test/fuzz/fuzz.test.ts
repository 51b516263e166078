/**
 * Bad input: OpenAPI-driven fuzzing over HTTP to the local server (DynamoDB Local, no mocks).
 *
 * The rate limiter stays ON: the ≥ 10,000 requests go with an Enterprise key whose custom limit (1,000,000/min) is
 * far above the run, so no 429 hides what the handlers do with the input, and every response still carries the
 * X-RateLimit-* headers openapi.json requires. (RATE_LIMITER=off would drop those headers and fail the contract.)
 * The limiter's own behaviour is covered in test/integration/limits.test.ts; test/fuzz/fuzz-plan-key.test.ts repeats
 * a smaller fuzz run with an ordinary Business key.
 *
 * The ignored-auth and 405 checks are in test/fuzz/auth.test.ts.
 *
 * Seeds are fixed (override with FUZZ_SEED); fast-check prints the seed, path and shrunk counterexample on failure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { nextLink, newStats, send, type Pet } from './exchange.ts';
import { createPetWith, enterpriseKey } from './keys.ts';
import type { World } from './oracle.ts';
import { anyRequest } from './requests.ts';
import { routeSamples } from './route-samples.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_107);
/** Requests per property run (sent in parallel), and runs: BATCH × RUNS generated requests. */
const BATCH = 50;
const RUNS = Number(process.env.FUZZ_RUNS ?? 202);
const MIN_REQUESTS = 10_000;

let api: TestApi;
let world: World;
const stats = newStats();

beforeAll(async () => {
  // The authorizer's result is cached per token for 300 s, as API Gateway does by default in the cloud, so the
  // run's DynamoDB time goes to the operations. Bad credentials are never cached (only Allow results are), and
  // test/fuzz/auth.test.ts checks revocation with the cache off.
  api = await startTestApi({ authCacheTtlSeconds: 300 });
  const keys = { reads: await enterpriseKey(api, 'fuzz-reads'), writes: await enterpriseKey(api, 'fuzz-writes') };
  // Known pets (GET must return them unchanged) and real cursors for each filter (as a client would get them).
  const pets: Pet[] = [];
  for (const [i, status] of ['available', 'pending', 'sold', 'available', 'pending', 'sold'].entries()) {
    pets.push(await createPetWith(api, keys.writes, { name: `seed ${i} ✓ עברית`, categoryId: i + 1, status }));
  }
  const cursors: World['cursors'][number][] = [];
  for (const status of [undefined, 'available', 'pending', 'sold']) {
    const res = await api.call(`/pets?limit=1${status ? `&status=${status}` : ''}`, { key: keys.reads });
    const next = nextLink(res.headers);
    expect(
      next,
      `a first page of 1 for ${status} announces a next page: ${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`,
    ).toBeDefined();
    cursors.push({ cursor: new URLSearchParams(next!.split('?')[1]).get('cursor')!, status });
  }
  world = { keys, pets, cursors, samples: await routeSamples(api, keys.writes) };
});
afterAll(async () => {
  console.info(`[fuzz] ${stats.requests} requests, ${stats.fiveXx} 5xx, by status ${JSON.stringify(stats.byStatus)}`);
  await api?.close();
});

describe('fuzzing every operation (limiter on, Enterprise key)', () => {
  it(`answers ≥ ${MIN_REQUESTS} generated valid and invalid requests as the oracle and openapi.json say, never 5xx`, async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(anyRequest(world), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await Promise.all(batch.map((r) => send(api.url, r, stats)));
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: false, verbose: 1 },
    );
    console.info(
      `[fuzz] property run: ${BATCH * RUNS} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${SEED})`,
    );
    expect(stats.fiveXx).toBe(0);
    if (!process.env.FUZZ_RUNS) expect(stats.requests).toBeGreaterThanOrEqual(MIN_REQUESTS);
    // ~35 s on a quiet 2-core machine; the limit only guards against a hang, so a loaded machine must not fail it.
  }, 900_000);
});

describe('authorizer cache', () => {
  // Regression test: the policy must allow the whole stage. It once allowed only `…/{stage}/{METHOD}/*` (methodArn's
  // account segment already ends in `:{apiId}`, so split('/') was misread), and with the cache on, POST then GET with
  // the same key got 403. Fixed in f2aebbf (lambdas/handlers/authorizer.ts stageWildcard).
  it('serves every operation from one cached Allow (POST, then GET with the same key)', async () => {
    const key = await enterpriseKey(api, 'cache');
    const created = await createPetWith(api, key, { name: 'Cached', categoryId: 1 });
    expect((await api.call('/pets', { key })).status).toBe(200);
    expect((await api.call(`/pets/${created.id}`, { key })).status).toBe(200);
  });
});
