/**
 * Read-only keys and expiry as a client sees them, over HTTP through the local gateway with the template's authorizer
 * cache (60 s), on the test's clock. Key records carry `scope` and `validUntil` as the admin tool writes them.
 *
 * - A read-only key is served by every operation that reads and refused by every operation that changes data (403
 *   key_read_only), walking the route table, so an operation added later is covered as it is declared; the refusal
 *   writes nothing anywhere.
 * - An expired key is told so (401 key_expired, saying when) for EXPIRED_NOTICE_SECONDS, by the function before its
 *   limiter or any storage call; after that the gateway refuses it as an unknown key, no function running. A key that
 *   expires while the gateway holds its Allow is refused from that second.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXPIRED_NOTICE_SECONDS, expiredMessage, readOnlyMessage } from '../../contract/auth.ts';
import { ERROR_CODES } from '../../contract/errors.ts';
import { BASE_PATH, ROUTES, writes } from '../../contract/routes.ts';
import { generateKey, generateKeyId, hashKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { countInvocations } from '../helpers/key-standing.ts';
import { fixturesSending, requestInit, sampleRequest, type SampleRequest } from '../helpers/samples.ts';

/**
 * The test's instant (unix seconds): the clock of the gateway and the functions stands here unless a test moves it.
 * Before every operation's sunset, so each answers its sample's status.
 */
const T0 = Date.UTC(2030, 2, 4, 12) / 1000;

let api: TestApi;
/** Invocations of every operation's function: a request that reached one was not refused by the gateway. */
let reached: { readonly count: number }[];

beforeAll(async () => {
  // As deployed: the template's authorizer cache.
  api = await startTestApi({ authCacheTtlSeconds: undefined });
  api.clock.set(() => T0 * 1000);
  reached = ROUTES.map((r) => countInvocations(api, r.operationId));
});
afterAll(() => api?.close());

const invocations = () => reached.reduce((n, c) => n + c.count, 0);

/** A new Business key whose record has `extra`, written as the admin tool writes records; its secret. */
async function keyWith(extra: Pick<KeyRecord, 'scope' | 'validUntil'>): Promise<string> {
  const key = generateKey();
  await createKeyAdminStore(api.storage).upsert({
    hash: hashKey(key),
    keyId: generateKeyId(),
    owner: 'scope-expiry-test',
    plan: 'business',
    status: 'active',
    createdAt: '2033-01-01T00:00:00.000Z',
    ...extra,
  });
  return key;
}

/** Every item of every table of the API, in a stable order: what a request that writes nothing leaves unchanged. */
async function everyItem(): Promise<string[]> {
  const items: string[] = [];
  for (const table of Object.values(api.storage.tables)) {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await api.storage.doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const i of out.Items ?? [])
        // The limiter's counts of the key (`rl#`, `rlh#`) move: a refused request is counted like any other.
        if (!/^rlh?#/.test(String(i.pk ?? ''))) items.push(`${table} ${JSON.stringify(i, Object.keys(i).sort())}`);
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return items.sort();
}

/** Sends a sample request with `key`. */
const send = (r: SampleRequest, key: string) => api.call(r.path, { ...requestInit(r), key });

/** Items a sample names are made with a key that may write. */
const fixtures = fixturesSending(async (r) => (await send(r, api.keys.business)).json());

describe('a read-only key', () => {
  it('is served by every operation that reads, as any key', async () => {
    const key = await keyWith({ scope: 'read' });
    const reads = ROUTES.filter((r) => !writes(r));
    expect(reads.length).toBeGreaterThan(0);
    for (const route of reads) {
      const r = await sampleRequest(route, fixtures);
      const res = await send(r, key);
      expect(res.status, route.operationId).toBe(r.status);
      // Counted as any call: its limit, not the gateway's static 0.
      expect(res.headers.get('x-ratelimit-limit'), route.operationId).not.toBe('0');
    }
  });

  it('is refused every operation that changes data: 403 key_read_only, nothing written anywhere', async () => {
    const key = await keyWith({ scope: 'read' });
    const changes = ROUTES.filter(writes);
    expect(changes.length).toBeGreaterThan(0);
    // Made first: what a sample names (its fixtures) is written by a key that may write.
    const requests = await Promise.all(changes.map((route) => sampleRequest(route, fixtures)));
    const before = await everyItem();
    const calls = invocations();
    for (const r of requests) {
      const res = await send(r, key);
      expect(res.status, r.operationId).toBe(403);
      expect(await res.json(), r.operationId).toEqual({
        code: 'key_read_only',
        message: readOnlyMessage(r.method, `${BASE_PATH}${r.resourcePath}`),
        status: ERROR_CODES.key_read_only.status,
      });
      // Counted against the key, as any request: a key that keeps sending them meets its limits.
      expect(res.headers.get('x-ratelimit-limit'), r.operationId).not.toBe('0');
      expect(res.headers.get('cache-control'), r.operationId).toBe('no-store');
    }
    // The function answered (the gateway cannot tell a read from a change for a key): one invocation each.
    expect(invocations() - calls).toBe(requests.length);
    expect(await everyItem()).toEqual(before);
  });

  it('with a key that may write, the same requests are served: the refusal is the scope, not the request', async () => {
    for (const route of ROUTES.filter(writes)) {
      const r = await sampleRequest(route, fixtures);
      expect((await send(r, api.keys.business)).status, route.operationId).toBe(r.status);
    }
  });
});

describe('an expired key', () => {
  const listPets = ROUTES.find((r) => r.operationId === 'listPets')!;
  const at = (sec: number) => api.clock.set(() => sec * 1000);
  beforeEach(() => at(T0));
  afterAll(() => at(T0));

  it('is served until its expiry, told it expired for a day from then, and refused as unknown after', async () => {
    const validUntil = T0 + 3_600;
    const key = await keyWith({ validUntil });
    const r = await sampleRequest(listPets, fixtures);

    at(validUntil - 120);
    expect((await send(r, key)).status).toBe(200);

    // Every second of its notice (its first and its last here), whatever the gateway cached: told why, by the
    // function, counted like any request and before anything else is read or written.
    for (const now of [validUntil, validUntil + 61, validUntil + EXPIRED_NOTICE_SECONDS - 1]) {
      at(now);
      const before = await everyItem();
      const calls = invocations();
      const res = await send(r, key);
      expect(res.status, `at +${now - validUntil} s`).toBe(401);
      expect(await res.json()).toEqual({ code: 'key_expired', message: expiredMessage(validUntil), status: 401 });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(res.headers.get('x-ratelimit-limit')).not.toBe('0');
      expect(invocations() - calls).toBe(1);
      expect(await everyItem()).toEqual(before);
    }

    // Past the notice: the authorizer refuses it, no function runs, and the client gets the plain 401.
    at(validUntil + EXPIRED_NOTICE_SECONDS + 61);
    const calls = invocations();
    const res = await send(r, key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(invocations() - calls).toBe(0);
  });

  it('is refused on every operation, a read-only one too, with the same answer', async () => {
    const validUntil = T0 - 60;
    for (const scope of ['all', 'read'] as const) {
      const key = await keyWith({ scope, validUntil });
      for (const route of ROUTES) {
        const r = await sampleRequest(route, fixtures);
        const res = await send(r, key);
        expect(res.status, `${scope} ${route.operationId}`).toBe(401);
        expect(((await res.json()) as { code: string }).code).toBe('key_expired');
      }
    }
  });

  it('that expires while the gateway holds its Allow is refused from that second', async () => {
    const validUntil = T0 + 7_200;
    const key = await keyWith({ validUntil });
    const r = await sampleRequest(listPets, fixtures);
    // Allowed and cached (60 s) 30 s before its expiry...
    at(validUntil - 30);
    expect((await send(r, key)).status).toBe(200);
    at(validUntil - 1);
    expect((await send(r, key)).status).toBe(200);
    // ...and refused at its expiry by the function, though the cached Allow has 30 s left.
    at(validUntil);
    const res = await send(r, key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('key_expired');
  });
});
