/**
 * The deprecation lifecycle of GET /pets/{petId} (spec section 9): until the removal date it answers as usual with
 * Deprecation / Sunset / successor Link headers; from the removal date on, 410 `endpoint_removed`. The dates come
 * from the route table only; the injectable clock proves both sides of the date.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { createAnimalStoreClient, type Pet } from '../../client/index.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { jsonOf } from '../helpers/common.ts';

const route = ROUTES.find((r) => r.operationId === 'getPet')!;
const d = route.deprecation!;
const SUNSET = Date.parse(d.sunsetAt);

let api: TestApi;
let pet: Pet;
beforeAll(async () => {
  api = await startTestApi();
  const store = createAnimalStoreClient({ baseUrl: api.url, apiKey: api.keys.business, fetch: api.fetch });
  pet = (await store.createPet({ name: 'Old', categoryId: 4, status: 'pending' })).data!;
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

const get = (id: number | string) => api.call(`/pets/${id}`, { key: api.keys.business });

function expectDeprecationHeaders(res: Response) {
  expect(res.headers.get('deprecation')).toBe(`@${Math.floor(Date.parse(d.deprecatedAt) / 1000)}`);
  expect(res.headers.get('deprecation')).toBe('@1767225600'); // 2026-01-01T00:00:00Z, the documented deprecation date
  expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  expect(res.headers.get('link')).toBe('</v1/pets?status=available>; rel="successor-version"');
}

describe('GET /pets/{petId} before its removal date', () => {
  it.each([
    ['now', undefined],
    ['the deprecation date', Date.parse(d.deprecatedAt)],
    ['the last millisecond before the sunset', SUNSET - 1],
  ])('answers 200 with Deprecation, Sunset and a successor Link at %s', async (_, at) => {
    if (at !== undefined) api.clock.set(() => at);
    const res = await get(pet.id);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(pet);
    expectDeprecationHeaders(res);
  });

  it('sends the headers on its errors too (404, 400)', async () => {
    api.clock.set(() => SUNSET - 1000);
    const missing = await get(999_999_999);
    expect(missing.status).toBe(404);
    expectDeprecationHeaders(missing);
    const bad = await get('abc');
    expect(bad.status).toBe(400);
    expectDeprecationHeaders(bad);
  });

  it('points at a successor that works', async () => {
    const res = await get(pet.id);
    const successor = /<\/v1([^>]+)>/.exec(res.headers.get('link')!)![1]!;
    const list = await api.call(successor, { key: api.keys.business });
    expect(list.status).toBe(200);
    expect(list.headers.get('deprecation')).toBeNull();
  });
});

describe('GET /pets/{petId} from its removal date on', () => {
  it.each([
    ['the sunset instant', SUNSET],
    ['a second later', SUNSET + 1000],
    ['years later', Date.parse('2035-06-01T00:00:00Z')],
  ])('answers 410 endpoint_removed at %s, for existing, missing and malformed ids alike', async (_, at) => {
    api.clock.set(() => at);
    for (const id of [pet.id, 999_999_999, 'abc']) {
      const res = await get(id);
      expect(res.status).toBe(410);
      const body = await jsonOf(res);
      expect(body).toEqual({
        code: 'endpoint_removed',
        message: expect.stringContaining('/v1/pets?status=available'),
        status: 410,
      });
      expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    }
  });

  it('leaves the other operations alone', async () => {
    api.clock.set(() => SUNSET + 1000);
    const list = await api.call('/pets?status=pending', { key: api.keys.business });
    expect(list.status).toBe(200);
    expect((await jsonOf(list)).map((p: Pet) => p.id)).toContain(pet.id);
  });

  it('comes back to 200 when the clock is before the date again (the date is the only switch)', async () => {
    api.clock.set(() => SUNSET + 1);
    expect((await get(pet.id)).status).toBe(410);
    api.clock.set(() => SUNSET - 1);
    expect((await get(pet.id)).status).toBe(200);
  });
});
