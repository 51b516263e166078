/**
 * A smaller fuzz run with an ordinary Business-plan key (1,000 requests/min) and the authorizer cache off
 * (the local default), so the plan's own limits and X-RateLimit-* values are on every response. 300 generated
 * requests stay well inside the plan: a 429 here fails the run (the oracle never expects one).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { newStats, send, type Pet } from './exchange.ts';
import type { World } from './oracle.ts';
import { anyRequest } from './requests.ts';
import { routeSamples } from './route-samples.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_107) + 1;
const BATCH = 25;
const RUNS = 12;

let api: TestApi;
let world: World;
const stats = newStats();

beforeAll(async () => {
  api = await startTestApi();
  const key = api.keys.business;
  const res = await api.call('/pets', {
    method: 'POST',
    key,
    body: JSON.stringify({ name: 'plan key', categoryId: 1, status: 'sold' }),
  });
  expect(res.status).toBe(201);
  world = {
    keys: { reads: key, writes: key },
    pets: [(await res.json()) as Pet],
    cursors: [],
    samples: await routeSamples(api, key),
  };
});
afterAll(async () => {
  console.info(
    `[fuzz plan key] ${stats.requests} requests, ${stats.fiveXx} 5xx, by status ${JSON.stringify(stats.byStatus)}`,
  );
  await api?.close();
});

it('answers generated requests with a Business key as the oracle and openapi.json say, with the plan limit in the headers', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(anyRequest(world), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      await Promise.all(batch.map((r) => send(api.url, r, stats)));
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true, verbose: 1 },
  );
  expect(stats.fiveXx).toBe(0);
  expect(stats.requests).toBe(BATCH * RUNS);
  const res = await api.call('/pets?limit=1', { key: world.keys.reads });
  expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(1000);
});
