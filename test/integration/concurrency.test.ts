/**
 * Concurrency: 1,000 creates at concurrency 50 over HTTP to the local server on DynamoDB Local give 1,000
 * distinct ids, every one readable as created, and list pagination (unfiltered and per status) sees each exactly
 * once. (The limiter under 200 parallel requests is in limits.test.ts; idempotent-create races in
 * idempotency.test.ts.)
 *
 * The limiter stays on: the run uses an Enterprise key with a custom limit far above its ~2,100 requests, so the
 * limiter's counter updates are on the hot path too without any 429. The authorizer result is cached (300 s, as
 * API Gateway caches it in the cloud); creates and reads use separate keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PET_STATUSES, type Pet } from '../../contract/schemas.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { nextLink, pool } from '../fuzz/exchange.ts';
import { enterpriseKey } from '../fuzz/keys.ts';

const CREATES = 1_000;
const CONCURRENCY = 50;

let api: TestApi;
let key: string;
let postKey: string;
const created: Pet[] = [];

beforeAll(async () => {
  api = await startTestApi({ authCacheTtlSeconds: 300 });
  key = await enterpriseKey(api, 'concurrency-get');
  postKey = await enterpriseKey(api, 'concurrency-post');
});
afterAll(() => api?.close());

/** Follows `Link: rel="next"` to the end; returns every page. */
async function allPages(first: string): Promise<Pet[][]> {
  const pages: Pet[][] = [];
  let path: string | undefined = first;
  while (path) {
    const res = await api.call(path, { key });
    expect(res.status, path).toBe(200);
    pages.push((await res.json()) as Pet[]);
    path = nextLink(res.headers);
    expect(pages.length, 'pagination terminates').toBeLessThan(CREATES);
  }
  return pages;
}

describe(`${CREATES} creates at concurrency ${CONCURRENCY}`, () => {
  it('all succeed with distinct ids, each echoing its input', async () => {
    const started = Date.now();
    const inputs = Array.from({ length: CREATES }, (_, i) => ({
      name: `conc-${i}`,
      categoryId: (i % 7) + 1,
      status: PET_STATUSES[i % 3]!,
    }));
    const results = await pool(inputs, CONCURRENCY, async (input) => {
      const res = await api.call('/pets', { method: 'POST', key: postKey, body: JSON.stringify(input) });
      return { status: res.status, pet: (await res.json()) as Pet };
    });
    console.info(`[concurrency] ${CREATES} creates in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(results.filter((r) => r.status !== 201)).toEqual([]);
    results.forEach(({ pet }, i) => expect(pet).toEqual({ id: expect.any(Number), ...inputs[i] }));
    created.push(...results.map((r) => r.pet));
    expect(new Set(created.map((p) => p.id)).size).toBe(CREATES);
  });

  it('every created pet is readable, unchanged', async () => {
    expect(created).toHaveLength(CREATES);
    const reads = await pool(created, CONCURRENCY, async (pet) => {
      const res = await api.call(`/pets/${pet.id}`, { key });
      return { status: res.status, pet: (await res.json()) as Pet };
    });
    expect(reads.filter((r) => r.status !== 200)).toEqual([]);
    expect(reads.map((r) => r.pet)).toEqual(created);
  });

  it('list pagination sees each pet exactly once, unfiltered and per status', async () => {
    expect(created).toHaveLength(CREATES);
    const expectOnce = (pages: Pet[][], expected: Pet[], limit: number) => {
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
      const seen = pages.flat();
      const counts = new Map<number, number>();
      for (const p of seen) counts.set(p.id, (counts.get(p.id) ?? 0) + 1);
      expect(
        [...counts].filter(([, n]) => n > 1),
        'ids seen more than once',
      ).toEqual([]);
      const byId = new Map(seen.map((p) => [p.id, p]));
      expect(
        expected.filter((p) => !byId.has(p.id)).map((p) => p.id),
        'ids never seen',
      ).toEqual([]);
      for (const p of expected) expect(byId.get(p.id)).toEqual(p);
      return seen;
    };
    // The table holds exactly the pets this file created (its own table prefix).
    const all = expectOnce(await allPages('/pets?limit=100'), created, 100);
    expect(all).toHaveLength(CREATES);
    for (const status of PET_STATUSES) {
      const mine = created.filter((p) => p.status === status);
      const seen = expectOnce(await allPages(`/pets?limit=37&status=${status}`), mine, 37);
      expect(seen).toHaveLength(mine.length);
    }
  });
});
