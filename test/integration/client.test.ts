/** The typed client (client/index.ts) against the local server, and its retry policy against stubbed responses. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import {
  backoffMs,
  createAnimalStoreClient,
  nextLink,
  retryAfterMs,
  retryingFetch,
  type AnimalStoreClient,
} from '../../client/index.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { clientCall, fixturesSending, sampleRequests } from '../helpers/samples.ts';

let api: TestApi;
let store: AnimalStoreClient;
beforeAll(async () => {
  api = await startTestApi();
  store = createAnimalStoreClient({
    baseUrl: api.url,
    apiKey: api.keys.business,
    fetch: api.fetch,
    retry: { sleep: async () => {} },
  });
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

describe('typed client against the local server', () => {
  it("sends every operation's sample through the typed client, headers included, and gets its status", async () => {
    const fixtures = fixturesSending(async (r) => (await clientCall(store, r)).data);
    for (const r of await sampleRequests(fixtures))
      expect((await clientCall(store, r)).response.status, r.operationId).toBe(r.status);
  });

  it('creates, reads and lists pets with typed results', async () => {
    const created = await store.createPet({ name: 'Rex', categoryId: 7 });
    if (!created.data) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(created.location).toBe(`/v1/pets/${created.data.id}`);
    const got = await store.getPet(created.data.id);
    expect(got.data).toEqual(created.data);
    const page = await store.listPets({ limit: 100 });
    expect(page.data?.map((p) => p.id)).toContain(created.data.id);
  });

  it('returns typed errors without retrying 4xx', async () => {
    let calls = 0;
    const counting = createAnimalStoreClient({
      baseUrl: api.url,
      apiKey: api.keys.business,
      fetch: (i, init) => (calls++, api.fetch(i, init)),
    });
    const bad = await counting.createPet({ name: '', categoryId: 1 });
    expect(bad.error).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(bad.data).toBeUndefined();
    const missing = await counting.getPet(987654321);
    expect(missing.error).toMatchObject({ code: 'not_found', status: 404 });
    expect(calls).toBe(2);
    const wrongKey = createAnimalStoreClient({
      baseUrl: api.url,
      apiKey: 'unknown_key_0123456789abcdef',
      fetch: api.fetch,
    });
    expect((await wrongKey.listPets()).error).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('sends Idempotency-Key: a retried create returns the first pet', async () => {
    const idempotencyKey = randomUUID();
    const first = await store.createPet({ name: 'Once', categoryId: 2 }, { idempotencyKey });
    const again = await store.createPet({ name: 'Once', categoryId: 2 }, { idempotencyKey });
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.data?.id).toBe(first.data?.id);
  });

  it('listAllPets follows next links through every page', async () => {
    const made: number[] = [];
    for (let i = 0; i < 11; i++)
      made.push((await store.createPet({ name: `s${i}`, categoryId: 5, status: 'sold' })).data!.id);
    const seen: number[] = [];
    for await (const p of store.listAllPets({ status: 'sold', limit: 4 })) {
      expect(p.status).toBe('sold');
      seen.push(p.id);
    }
    expect(seen.sort((a, b) => a - b)).toEqual(made.sort((a, b) => a - b));
  });

  it('listAllPets throws a typed error', async () => {
    api.clock.set(() => Date.parse('2031-01-01T00:00:00Z'));
    const removed = await store.getPet(1);
    expect(removed.error).toMatchObject({ code: 'endpoint_removed', status: 410 });
    const wrongKey = createAnimalStoreClient({
      baseUrl: api.url,
      apiKey: 'unknown_key_0123456789abcdef',
      fetch: api.fetch,
    });
    await expect(wrongKey.listAllPets().next()).rejects.toMatchObject({
      name: 'AnimalStoreError',
      status: 401,
      code: 'unauthorized',
    });
  });

  it('waits out a real 429 (Free plan, 60/min) honouring Retry-After, then succeeds', async () => {
    // A fixed instant 30 s into a minute; the injected sleep moves the server's clock instead of waiting.
    let t = Date.parse('2029-03-01T12:00:30Z');
    api.clock.set(() => t);
    for (let i = 0; i < 60; i++) expect((await api.call('/pets?limit=1', { key: api.keys.free })).status).toBe(200);
    expect((await api.call('/pets?limit=1', { key: api.keys.free })).status).toBe(429);
    const waits: number[] = [];
    const retries: Array<{ attempt: number; status: number }> = [];
    const free = createAnimalStoreClient({
      baseUrl: api.url,
      apiKey: api.keys.free,
      fetch: api.fetch,
      retry: {
        sleep: async (ms) => void (waits.push(ms), (t += ms)),
        onRetry: ({ attempt, status }) => retries.push({ attempt, status }),
      },
    });
    const page = await free.listPets({ limit: 1 });
    expect(page.response.status).toBe(200);
    expect(retries).toEqual([{ attempt: 1, status: 429 }]);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(30_000); // Retry-After: 30, plus jitter
    expect(waits[0]).toBeLessThan(30_000 + 250);
    expect(page.response.headers.get('X-RateLimit-Remaining')).toBe('59');
  });
});

describe('retry policy (stubbed responses)', () => {
  const error = (status: number, code: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ code, message: code, status }), {
      status,
      headers: { 'Content-Type': 'application/json', ...headers },
    });
  const ok = () => new Response('[]', { status: 200, headers: { 'Content-Type': 'application/json' } });
  function stub(...responses: Array<() => Response>) {
    const seen: Request[] = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(new Request(input, init));
      return (responses[seen.length - 1] ?? responses.at(-1)!)();
    };
    return { fetch: fetch as typeof globalThis.fetch, seen };
  }
  const opts = (waits: number[], extra = {}) => ({
    sleep: async (ms: number) => void waits.push(ms),
    random: () => 0.5,
    ...extra,
  });

  it('retries 503 and 429 with exponential backoff, at least Retry-After, bounded attempts', async () => {
    const waits: number[] = [];
    const s = stub(
      () => error(503, 'service_unavailable'),
      () => error(503, 'service_unavailable'),
      () => error(429, 'rate_limited', { 'Retry-After': '2' }),
      ok,
    );
    const c = createAnimalStoreClient({
      baseUrl: 'http://store.test/v1',
      apiKey: 'k',
      fetch: s.fetch,
      retry: opts(waits),
    });
    const r = await c.listPets();
    expect(r.data).toEqual([]);
    expect(s.seen).toHaveLength(4);
    expect(s.seen.every((q) => q.headers.get('authorization') === 'Bearer k')).toBe(true);
    expect(waits).toEqual([125, 250, 2000 + 500]); // step 250·2^(n-1), full jitter at 0.5 (no Retry-After: at least half a step)
    const waits2: number[] = [];
    const always = stub(() => error(503, 'service_unavailable', { 'Retry-After': '1' }));
    const c2 = createAnimalStoreClient({
      baseUrl: 'http://store.test/v1',
      apiKey: 'k',
      fetch: always.fetch,
      retry: opts(waits2, { maxAttempts: 3 }),
    });
    expect((await c2.listPets()).error).toMatchObject({ code: 'service_unavailable' });
    expect(always.seen).toHaveLength(3);
  });

  it('does not retry 501, a POST after a 5xx without Idempotency-Key, or a Retry-After beyond the cap', async () => {
    const waits: number[] = [];
    const s501 = stub(() => error(501, 'not_implemented'));
    await retryingFetch(s501.fetch, opts(waits))(new Request('http://store.test/v1/store/orders'));
    expect(s501.seen).toHaveLength(1);
    const post = stub(() => error(503, 'service_unavailable'), ok);
    const c = createAnimalStoreClient({
      baseUrl: 'http://store.test/v1',
      apiKey: 'k',
      fetch: post.fetch,
      retry: opts(waits),
    });
    await c.createPet({ name: 'x', categoryId: 1 });
    expect(post.seen).toHaveLength(1);
    const keyed = stub(
      () => error(503, 'service_unavailable'),
      () =>
        new Response('{"id":1,"name":"x","categoryId":1,"status":"available"}', {
          status: 201,
          headers: { 'Content-Type': 'application/json' },
        }),
    );
    const c2 = createAnimalStoreClient({
      baseUrl: 'http://store.test/v1',
      apiKey: 'k',
      fetch: keyed.fetch,
      retry: opts(waits),
    });
    const created = await c2.createPet({ name: 'x', categoryId: 1 }, { idempotencyKey: 'abc' });
    expect(created.data?.id).toBe(1);
    expect(keyed.seen.map((q) => q.headers.get('idempotency-key'))).toEqual(['abc', 'abc']);
    expect(await keyed.seen[1]!.json()).toEqual({ name: 'x', categoryId: 1 }); // the body is re-sent intact
    const banned = stub(() => error(429, 'key_banned', { 'Retry-After': '900' }));
    await retryingFetch(banned.fetch, opts(waits))(new Request('http://store.test/v1/pets'));
    expect(banned.seen).toHaveLength(1);
    expect(waits).toEqual([125]);
  });

  it('parses Retry-After, Link and backoff', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2099 00:00:10 GMT', Date.parse('2099-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(nextLink('</v1/pets?cursor=a.b>; rel="next"')).toBe('/v1/pets?cursor=a.b');
    expect(nextLink('</v1/pets?status=sold>; rel="successor-version"')).toBeUndefined();
    expect(nextLink('</a>; rel="prev", </b>; rel="next"')).toBe('/b');
    const o = { baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.999 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, undefined, o))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffMs(1, 5000, { ...o, random: () => 0 })).toBe(5000);
  });
});
