/**
 * When the network lies: the functions talk to DynamoDB Local through a fault-injecting proxy that loses answers
 * (the write is applied, the SDK times out and resends it), throttles, errors or hangs. Over HTTP through the local
 * gateway: one POST writes one pet, a limiter count is made once, outages answer 503 with the Error object, and a
 * slow DynamoDB is cut off by the request's deadline (from the Lambda context's remaining time) with a clean 503.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';
import { storedPetsNamed } from '../helpers/pets-table.ts';

/**
 * The SDK's per-attempt timeout here; a lost answer is held longer, so the SDK gives up on it and resends. Three
 * attempts of it (12 s) outlast the functions' 10 s timeout, which the local gateway takes from the template.
 */
const ATTEMPT_MS = 4_000;
const LOST = { kind: 'lose-answer', holdMs: ATTEMPT_MS + 500 } as const;

let proxy: FaultProxy;
let api: TestApi;
let client: DynamoDBClient;
/** The functions' log and EMF lines. */
const lines: string[] = [];

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  api = await startTestApi({
    dynamoEndpoint: proxy.url,
    env: { DYNAMODB_TIMEOUT_MS: String(ATTEMPT_MS), METRICS: 'on' },
    log: (line) => lines.push(line),
  });
  const { localClient } = await import('../../lambdas/storage/provision.ts');
  client = localClient(inject('dynamoEndpoint')); // straight to DynamoDB Local: what is really stored
});
afterAll(async () => {
  client?.destroy();
  await api?.close();
  await proxy?.close();
});
afterEach(() => {
  proxy.clear();
  api.clock.reset();
});

/** How many pets with this name the table really holds. */
const petsNamed = async (name: string) => (await storedPetsNamed(client, api.tableEnv.PETS_TABLE_NAME!, name)).length;

const post = (name: string, headers: Record<string, string> = {}) =>
  api.call('/pets', { method: 'POST', body: JSON.stringify({ name, categoryId: 1 }), key: api.keys.business, headers });

describe('a write whose answer was lost is resent by the SDK and applied once', () => {
  it('a POST whose put was applied but not answered writes exactly one pet', async () => {
    const name = `lost-${randomUUID()}`;
    proxy.add({ target: 'PutItem', body: name, times: 1, fault: LOST });
    const res = await post(name);
    expect(res.status).toBe(201);
    expect(proxy.log.filter((r) => r.target === 'PutItem' && r.body.includes(name))).toHaveLength(2); // sent twice
    expect(await petsNamed(name)).toBe(1);
    const pet = (await res.json()) as { id: number };
    expect((await api.call(`/pets/${pet.id}`, { key: api.keys.business })).status).toBe(200);
  });

  it("an Idempotency-Key claim whose answer was lost is this request's claim, not a 409", async () => {
    const name = `claim-${randomUUID()}`;
    const key = randomUUID();
    proxy.add({ target: 'PutItem', body: `#${key}`, times: 1, fault: LOST });
    const res = await post(name, { 'Idempotency-Key': key });
    expect(res.status).toBe(201);
    expect(await petsNamed(name)).toBe(1);
    const again = await post(name, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await petsNamed(name)).toBe(1);
  });

  it('a create transaction whose answer was lost writes one pet and completes the key', async () => {
    const name = `txn-${randomUUID()}`;
    const key = randomUUID();
    proxy.add({ target: 'TransactWriteItems', body: name, times: 1, fault: LOST });
    expect((await post(name, { 'Idempotency-Key': key })).status).toBe(201);
    expect(await petsNamed(name)).toBe(1);
  });

  it('a limiter count whose answer was lost is counted once: exactly the limit passes', async () => {
    api.clock.set(() => Date.UTC(2031, 2, 3, 10, 20, 5));
    const first = await api.call('/pets?limit=1'); // opens the minute
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    // The next count on the common path is applied by DynamoDB, but its answer is lost and the SDK resends it.
    proxy.add({ target: 'UpdateItem', body: 'ADD m :one', times: 1, fault: LOST });
    const lost = await api.call('/pets?limit=1');
    expect(lost.status).toBe(200);
    expect(lost.headers.get('x-ratelimit-remaining')).toBe('58');
    const rest = [];
    for (let i = 0; i < 59; i++) rest.push(await api.call('/pets?limit=1', { contract: false }));
    expect(rest.map((r) => r.status).filter((s) => s === 200)).toHaveLength(58); // 60 in all: the Free limit
    expect(rest.at(-1)!.status).toBe(429);
  });
});

describe('a dependency that is unsure or slow answers 503 + Retry-After', () => {
  it('TransactionInProgressException (the same transaction still running) is 503, and the key is free again', async () => {
    const name = `inprogress-${randomUUID()}`;
    const key = randomUUID();
    proxy.add({
      target: 'TransactWriteItems',
      body: name,
      fault: { kind: 'error', status: 400, type: 'TransactionInProgressException' },
    });
    const res = await post(name, { 'Idempotency-Key': key });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    proxy.clear();
    expect((await post(name, { 'Idempotency-Key': key })).status).toBe(201);
  });

  it('maps DNS and routing failures to 503, as the SDK reports them', async () => {
    const { rethrowStorageError } = await import('../../lambdas/storage/client.ts');
    const { UnavailableError } = await import('../../lambdas/domain/errors.ts');
    for (const code of ['EAI_AGAIN', 'ENETUNREACH', 'ENETDOWN', 'ECONNABORTED']) {
      expect(() => rethrowStorageError(Object.assign(new Error(code), { code }))).toThrow(UnavailableError);
      // The SDK may wrap the socket error.
      expect(() =>
        rethrowStorageError(new Error('wrapped', { cause: Object.assign(new Error(code), { code }) })),
      ).toThrow(UnavailableError);
    }
    expect(() =>
      rethrowStorageError(Object.assign(new Error('x'), { name: 'TransactionInProgressException' })),
    ).toThrow(UnavailableError);
  });

  // Lambda ends a function at its timeout (the local gateway does too): then the client gets the gateway's error,
  // without the rate-limit headers, no metric is counted, and the Idempotency-Key claim is never released.
  it('a hanging DynamoDB is cut off before the function timeout: 503 with the Error object, headers and a metric', async () => {
    lines.length = 0;
    proxy.add({ target: 'Scan', body: api.tableEnv.PETS_TABLE_NAME, fault: { kind: 'hang' } });
    const res = await api.call('/pets', { key: api.keys.business });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(lines.some((l) => l.includes('"StorageUnavailable"'))).toBe(true);
  });

  it('a create cut off by the deadline releases its Idempotency-Key: the retry creates the pet, not a 409', async () => {
    const name = `deadline-${randomUUID()}`;
    const key = randomUUID();
    proxy.add({ target: 'TransactWriteItems', body: name, fault: { kind: 'hang' } });
    const res = await post(name, { 'Idempotency-Key': key });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    proxy.clear();
    const retry = await post(name, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(await petsNamed(name)).toBe(1);
  });
});
