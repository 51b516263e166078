/** The API end to end over HTTP through the local gateway, on DynamoDB Local. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient, type AnimalStoreClient } from '../../client/index.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { expectError, jsonOf } from '../helpers/common.ts';
import { PLACEHOLDER_FIXTURES, requestInit, resourcesWithAllow, sampleRequests } from '../helpers/samples.ts';

let api: TestApi;
/** Happy paths go through the typed client (contract-validated like every call). */
let store: AnimalStoreClient;
beforeAll(async () => {
  api = await startTestApi();
  store = createAnimalStoreClient({ baseUrl: api.url, apiKey: api.keys.business, fetch: api.fetch });
});
afterAll(() => api?.close());

const json = { 'Content-Type': 'application/json' };
const create = (body: unknown) =>
  api.call('/pets', { method: 'POST', body: JSON.stringify(body), headers: json, key: api.keys.business });

describe('POST /pets', () => {
  it('creates a pet with a service-assigned id, default status available, and a Location', async () => {
    const { data: pet, response, location } = await store.createPet({ name: 'Rex', categoryId: 7 });
    expect(response.status).toBe(201);
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(Number.isSafeInteger(pet!.id) && pet!.id > 0).toBe(true);
    expect(location).toBe(`/v1/pets/${pet!.id}`);
  });

  it('keeps the given status, and refuses a client-sent id by name instead of assigning another', async () => {
    const sold = await create({ name: 'Tom', categoryId: 2, status: 'sold' });
    expect(sold.status).toBe(201);
    expect((await jsonOf(sold)).status).toBe('sold');
    const res = await create({ id: 424242, name: 'Tom', categoryId: 2, status: 'sold' });
    await expectError(res, 400, 'validation_failed');
    expect((await api.call('/pets/424242')).status).toBe(404);
  });

  it.each([
    ['missing name', { categoryId: 1 }],
    ['missing categoryId', { name: 'x' }],
    ['empty name', { name: '', categoryId: 1 }],
    ['blank name', { name: '   ', categoryId: 1 }],
    ['name too long', { name: 'x'.repeat(201), categoryId: 1 }],
    ['name not a string', { name: 5, categoryId: 1 }],
    ['categoryId a string', { name: 'x', categoryId: '1' }],
    ['categoryId fractional', { name: 'x', categoryId: 1.5 }],
    ['categoryId zero', { name: 'x', categoryId: 0 }],
    ['categoryId unsafe', { name: 'x', categoryId: 2 ** 53 }],
    ['unknown status', { name: 'x', categoryId: 1, status: 'lost' }],
    ['array body', [{ name: 'x', categoryId: 1 }]],
    ['null body', null],
    ['string body', 'pet'],
  ])('rejects %s with 400', async (_, body) => {
    await expectError(await create(body), 400, 'validation_failed');
  });

  it.each([
    [
      'a zero width space',
      '\u200b',
      /must not be blank \(spaces and invisible characters such as U\+200B do not count\)/,
    ],
    ['a byte order mark and spaces', '\ufeff \u00a0', /must not be blank/],
    ['a Hangul filler', '\u3164', /must not be blank/],
    ['NUL and an escape sequence', '\u0000\u001b[31mred', /must not contain control characters/],
    ['a newline', 'Rex\nSmith', /must not contain control characters/],
  ])('refuses a name of %s with a message that says why', async (_, name, message) => {
    const res = await create({ name, categoryId: 1 });
    const body = await expectError(res, 400, 'validation_failed');
    expect(body.message).toMatch(message);
  });

  it('keeps invisible characters inside a visible name (emoji sequences need them)', async () => {
    const res = await create({ name: '👩\u200d💻 Ada', categoryId: 1 });
    expect(res.status).toBe(201);
    expect((await jsonOf(res)).name).toBe('👩\u200d💻 Ada');
  });

  it('refuses a __proto__ or constructor.prototype key by name like any unknown field, polluting nothing', async () => {
    for (const [body, field] of [
      ['{"name":"Proto","categoryId":1,"__proto__":{"status":"sold","polluted":true}}', '__proto__'],
      ['{"name":"Proto","categoryId":1,"\\u005f_proto__":{"status":"sold"}}', '__proto__'],
      ['{"name":"Proto","categoryId":1,"constructor":{"prototype":{"polluted":true}}}', 'constructor'],
    ]) {
      const res = await api.call('/pets', { method: 'POST', body, headers: json });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { message: string }).message, body).toContain(field);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects malformed JSON and an empty body with 400', async () => {
    await expectError(
      await api.call('/pets', { method: 'POST', body: '{"name": "x",', headers: json }),
      400,
      'invalid_json',
    );
    await expectError(await api.call('/pets', { method: 'POST', headers: json }), 400, 'validation_failed');
  });

  it('rejects a non-JSON content type with 415', async () => {
    const res = await api.call('/pets', { method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } });
    await expectError(res, 415, 'unsupported_media_type');
  });

  it('rejects a body over the size cap with 413', async () => {
    await expectError(await create({ name: 'x', categoryId: 1, pad: 'y'.repeat(20_000) }), 413, 'payload_too_large');
  });

  it('gives 40 concurrent creates 40 distinct, readable ids', async () => {
    const pets = await Promise.all(
      Array.from({ length: 40 }, (_, i) => store.createPet({ name: `c${i}`, categoryId: 3 }).then((r) => r.data!)),
    );
    const ids = new Set(pets.map((p) => p.id));
    expect(ids.size).toBe(40);
    for (const p of pets) {
      const got = await store.getPet(p.id);
      expect(got.response.status).toBe(200);
      expect(got.data).toEqual(p);
    }
  });
});

describe('GET /pets', () => {
  it('returns a JSON array of pets, default page 20, full pages when filtering by status', async () => {
    for (let i = 0; i < 25; i++)
      await store.createPet({ name: `p${i}`, categoryId: 1, status: i % 2 ? 'pending' : 'available' });
    const all = await api.call('/pets', { key: api.keys.pro });
    expect(all.status).toBe(200);
    const page = await jsonOf(all);
    expect(Array.isArray(page)).toBe(true);
    expect(page).toHaveLength(20);
    const pending = await jsonOf(await api.call('/pets?status=pending&limit=12', { key: api.keys.pro }));
    expect(pending).toHaveLength(12);
    expect(pending.every((p: { status: string }) => p.status === 'pending')).toBe(true);
    const three = await jsonOf(await api.call('/pets?limit=3', { key: api.keys.pro }));
    expect(three).toHaveLength(3);
  });

  it.each([
    'limit=0',
    'limit=101',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=',
    'status=lost',
    'status=',
    'status=AVAILABLE',
  ])('rejects %s with 400', async (q) => {
    await expectError(await api.call(`/pets?${q}`, { key: api.keys.pro }), 400, 'validation_failed');
  });
});

describe('GET /pets/{petId} (deprecated)', () => {
  it('returns the pet with Deprecation, Sunset and a successor Link', async () => {
    const pet = await jsonOf(await create({ name: 'Old', categoryId: 4 }));
    const res = await api.call(`/pets/${pet.id}`, { key: api.keys.pro });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual(pet);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(res.headers.get('link')).toMatch(/<\/v1\/pets\?status=[a-z]+>; rel="successor-version"/);
  });

  it('answers 404 for an unknown id and 400 for a non-integer id, with deprecation headers', async () => {
    const missing = await api.call('/pets/999999999', { key: api.keys.pro });
    await expectError(missing, 404, 'not_found');
    expect(missing.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    for (const bad of ['abc', '1.5', '%E0%A4%A']) {
      const res = await api.call(`/pets/${bad}`, { key: api.keys.pro });
      expect([400, 404]).toContain(res.status);
      await expectError(res, res.status);
    }
  });

  it('answers 404 for any valid int64 that names no pet (the spec types petId as int64), 400 only for what is not an int64', async () => {
    // Above 2^53 the id cannot be a number in JavaScript: it must still name no pet, not round to one that exists.
    for (const id of [
      '9223372036854775807',
      '-9223372036854775808',
      '9007199254740993',
      '9007199254740992',
      '0',
      '-1',
    ]) {
      await expectError(await api.call(`/pets/${id}`, { key: api.keys.pro }), 404, 'not_found');
    }
    for (const id of ['9223372036854775808', '-9223372036854775809', '18446744073709551615', '1.0', '01', '1e3']) {
      await expectError(await api.call(`/pets/${id}`, { key: api.keys.pro }), 400, 'validation_failed');
    }
  });
});

describe('gateway behaviour', () => {
  it('answers 404 with the Error object for unknown paths', async () => {
    for (const p of ['/nope', '/pets/1/toys', '/']) await expectError(await api.call(p), 404, 'not_found');
    await expectError(await fetch(api.url.replace('/v1', '/v2/pets')), 404, 'not_found');
  });

  it('answers 405 with Allow for unsupported methods on known paths', async () => {
    for (const { path, methods, allow } of resourcesWithAllow()) {
      const method = (['DELETE', 'PUT', 'PATCH', 'POST'] as const).find((m) => !methods.includes(m))!;
      const res = await api.call(path, { method, ...(method === 'DELETE' ? {} : { body: '{}' }) });
      await expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
      expect(allow).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
    }
  });

  it.each([
    ['no header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['empty bearer', 'Bearer '],
    ['bearer with an unknown key', `bearer free_0123456789abcdef0123`],
    // Of the issued shape, so storage is asked and knows it not (other shapes are refused with no read).
    ['unknown key', `Bearer ${generateKey()}`],
    ['key too short', 'Bearer short'],
  ])('answers 401 for %s, on every operation, before any lookup', async (_, auth) => {
    for (const r of await sampleRequests(PLACEHOLDER_FIXTURES)) {
      const res = await fetch(`${api.url}${r.path}`, requestInit(r, { headers: auth ? { Authorization: auth } : {} }));
      await expectError(res, 401, 'unauthorized');
    }
  });

  it('reads the Authorization scheme in any case (RFC 9110): bearer and BEARER are Bearer', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await fetch(`${api.url}/pets?limit=1`, {
        headers: { Authorization: `${scheme} ${api.keys.business}` },
      });
      expect(res.status, scheme).toBe(200);
    }
  });

  it('answers HEAD like any method a resource does not declare: 405 with Allow (see docs/api.md)', async () => {
    for (const { path, allow } of resourcesWithAllow().filter((r) => r.methods.includes('GET'))) {
      const res = await api.call(path, { method: 'HEAD', key: api.keys.business, contract: false });
      expect(res.status, path).toBe(405);
      expect(res.headers.get('allow'), path).toBe(allow);
    }
  });

  it('answers 501 for GET /store/orders', async () => {
    await expectError(await api.call('/store/orders', { key: api.keys.business }), 501, 'not_implemented');
  });
});

describe('deeply nested bodies', () => {
  it('refuses JSON nested past 32 levels with a clear 400, however it is nested', async () => {
    for (const depth of [33, 3000]) {
      const body = `{"name":"x","categoryId":1,"extra":${'['.repeat(depth)}1${']'.repeat(depth)}}`;
      const res = await api.call('/pets', { method: 'POST', body, key: api.keys.business });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/nested more than 32 levels/);
    }
    const ok = await api.call('/pets', {
      method: 'POST',
      body: '{"name":"[[[[x","categoryId":1,"extra":[[[1]]]}',
      key: api.keys.business,
    });
    // Shallow enough to be read: then refused for its unknown field, not its depth.
    expect(ok.status).toBe(400);
    expect(((await ok.json()) as { message: string }).message).toMatch(/Unrecognized key: "extra"/);
  });
});
