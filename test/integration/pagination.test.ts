/**
 * Pagination beyond `limit` (a gap in the spec). The body is a bare array; a further page is announced in
 * `Link: <…>; rel="next"` with an opaque, signed cursor bound to the list it came from (operation, path, filters) and valid 24 hours.
 *
 * The last page: a page shorter than `limit` never has a next link. A page that fills `limit` exactly may announce
 * a next page (the store cannot know there is nothing left without reading on); that page is then empty and has no
 * next link. Clients stop at the first page without a next link (the typed client's listAllPets does).
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CURSOR_TTL_SECONDS } from '../../lambdas/domain/pagination.ts';
import { PET_STATUSES, type Pet, type PetStatus } from '../../contract/schemas.ts';
import { createAnimalStoreClient, nextLink, type AnimalStoreClient } from '../../client/index.ts';
import { startTestApi, TEST_CURSOR_SECRET, type TestApi } from '../helpers/api.ts';

let api: TestApi;
let store: AnimalStoreClient;
const pets: Pet[] = [];
beforeAll(async () => {
  api = await startTestApi();
  store = createAnimalStoreClient({ baseUrl: api.url, apiKey: api.keys.business, fetch: api.fetch });
  for (let i = 0; i < 23; i++) {
    const r = await store.createPet({ name: `p${i}`, categoryId: 1, status: PET_STATUSES[i % 3] });
    pets.push(r.data!);
  }
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

const call = (path: string) => api.call(path, { key: api.keys.business });
const fromLink = (link: string) => link.replace(/^\/v1/, '');

interface Walk {
  pages: Pet[][];
  links: Array<string | undefined>;
}
/** Follows next links from `first`; `between` runs after each page (e.g. concurrent creates). */
async function walk(first: string, between?: () => Promise<unknown>): Promise<Walk> {
  const out: Walk = { pages: [], links: [] };
  let path: string | undefined = first;
  while (path) {
    const res = await call(path);
    expect(res.status).toBe(200);
    out.pages.push((await res.json()) as Pet[]);
    const link = nextLink(res.headers.get('link'));
    out.links.push(link);
    path = link && fromLink(link);
    if (between) await between();
    if (out.pages.length > 100) throw new Error('runaway walk');
  }
  return out;
}
const ids = (ps: Pet[]) => ps.map((p) => p.id).sort((a, b) => a - b);

async function firstCursor(query: string): Promise<string> {
  const res = await call(`/pets?${query}`);
  const link = nextLink(res.headers.get('link'));
  expect(link).toBeDefined();
  return new URL(link!, 'http://x').searchParams.get('cursor')!;
}

describe('walking next links', () => {
  it.each([1, 5, 7, 20, 100])('returns every pet exactly once with limit=%i', async (limit) => {
    const w = await walk(`/pets?limit=${limit}`);
    const all = w.pages.flat();
    expect(ids(all)).toEqual(ids(pets));
    for (const p of w.pages) expect(p.length).toBeLessThanOrEqual(limit);
    // Every link keeps the query of the first page.
    for (const l of w.links.filter(Boolean))
      expect(l).toMatch(new RegExp(`^/v1/pets\\?limit=${limit}&cursor=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
  });

  it('uses the default page size (20) when limit is omitted', async () => {
    const w = await walk('/pets');
    expect(w.pages[0]).toHaveLength(20);
    expect(ids(w.pages.flat())).toEqual(ids(pets));
  });

  it.each(PET_STATUSES)('returns every %s pet exactly once with the status filter', async (status: PetStatus) => {
    const w = await walk(`/pets?status=${status}&limit=3`);
    const all = w.pages.flat();
    expect(all.every((p) => p.status === status)).toBe(true);
    expect(ids(all)).toEqual(ids(pets.filter((p) => p.status === status)));
    for (const l of w.links.filter(Boolean)) expect(l).toContain(`status=${status}`);
  });

  it('returns every pet that existed before the walk exactly once while pets are being created', async () => {
    const before = [...pets];
    const created: Pet[] = [];
    const createSome = () =>
      Promise.all(
        [0, 1].map(async (i) => {
          const r = await store.createPet({ name: `during${i}`, categoryId: 9, status: i ? 'sold' : 'available' });
          created.push(r.data!);
        }),
      );
    for (const [query, filter] of [
      ['limit=4', () => true],
      ['status=sold&limit=2', (p: Pet) => p.status === 'sold'],
    ] as const) {
      const w = await walk(`/pets?${query}`, createSome);
      const seen = w.pages.flat();
      expect(new Set(seen.map((p) => p.id)).size, 'no pet twice').toBe(seen.length);
      expect(ids(seen.filter((p) => before.some((b) => b.id === p.id)))).toEqual(ids(before.filter(filter)));
      const known = new Set([...before, ...created].map((p) => p.id));
      expect(seen.every((p) => known.has(p.id) && filter(p))).toBe(true);
    }
    expect(created.length).toBeGreaterThan(0);
    pets.push(...created);
  });

  it('ends with a page without a next link; a page that fills limit exactly may be followed by one empty page', async () => {
    const total = pets.length;
    const short = await walk(`/pets?limit=100`);
    expect(short.pages).toHaveLength(1);
    expect(short.links).toEqual([undefined]);
    const exact = await walk(`/pets?limit=${total}`);
    expect(exact.pages[0]).toHaveLength(total);
    expect(exact.links.at(-1)).toBeUndefined();
    if (exact.pages.length > 1) {
      // The documented case: the full page announced a next page, which is empty and final.
      expect(exact.pages).toHaveLength(2);
      expect(exact.pages[1]).toEqual([]);
    }
    for (const [i, page] of exact.pages.entries()) if (page.length < total) expect(exact.links[i]).toBeUndefined();
  });
});

describe('invalid cursors → 400 invalid_cursor', () => {
  async function expectInvalid(path: string) {
    const res = await call(path);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'invalid_cursor', message: expect.any(String), status: 400 });
  }

  it('rejects forged cursors', async () => {
    const cursor = await firstCursor('limit=2');
    const [data, mac] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(data, 'base64url').toString()) as { a: number };
    const moved = Buffer.from(JSON.stringify({ ...payload, a: payload.a + 1 })).toString('base64url');
    const flipped = mac.slice(0, -1) + (mac.at(-1) === 'A' ? 'B' : 'A');
    for (const forged of [
      `${data}.${flipped}`,
      `${moved}.${mac}`,
      `${data}.`,
      data,
      `${cursor}.x`,
      'abc',
      'a.b',
      `${data}.${mac}${mac}`,
    ]) {
      await expectInvalid(`/pets?limit=2&cursor=${encodeURIComponent(forged)}`);
    }
  });

  it('rejects a MAC with non-ASCII characters (400, not a 500 from comparing buffers of different lengths)', async () => {
    const [data, mac] = (await firstCursor('limit=2')).split('.') as [string, string];
    for (const odd of ['é', '€', '😀'])
      await expectInvalid(
        `/pets?limit=2&cursor=${encodeURIComponent(`${data}.${mac.slice(0, mac.length - odd.length)}${odd}`)}`,
      );
  });

  it('rejects a correctly signed cursor whose position is not a pet id (as with a leaked secret): 400, not a DynamoDB 500', async () => {
    // The secret startTestApi gives the functions; sign what an attacker holding it could: a real cursor's payload,
    // bound as it is, with another position.
    const secret = TEST_CURSOR_SECRET;
    const real = JSON.parse(
      Buffer.from((await firstCursor('limit=2')).split('.')[0]!, 'base64url').toString(),
    ) as object;
    for (const a of ['x', { N: '1' }, -1, 1.5, 2 ** 60]) {
      const data = Buffer.from(JSON.stringify({ ...real, a })).toString('base64url');
      const mac = createHmac('sha256', secret).update(data).digest('base64url');
      await expectInvalid(`/pets?limit=2&cursor=${data}.${mac}`);
    }
  });

  it('rejects expired cursors, and accepts them until they expire', async () => {
    const t0 = Date.now();
    api.clock.set(() => t0);
    const cursor = await firstCursor('limit=2');
    api.clock.set(() => t0 + (CURSOR_TTL_SECONDS - 60) * 1000);
    expect((await call(`/pets?limit=2&cursor=${cursor}`)).status).toBe(200);
    api.clock.set(() => t0 + (CURSOR_TTL_SECONDS + 1) * 1000);
    await expectInvalid(`/pets?limit=2&cursor=${cursor}`);
  });

  it('rejects cursors used with another status filter', async () => {
    const pending = await firstCursor('status=pending&limit=2');
    await expectInvalid(`/pets?status=sold&limit=2&cursor=${pending}`);
    await expectInvalid(`/pets?limit=2&cursor=${pending}`);
    const unfiltered = await firstCursor('limit=2');
    await expectInvalid(`/pets?status=available&limit=2&cursor=${unfiltered}`);
    // Only the filter is bound: the page size may change between pages.
    expect((await call(`/pets?status=pending&limit=5&cursor=${pending}`)).status).toBe(200);
  });
});
