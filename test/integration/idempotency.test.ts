/** Idempotent create: POST /pets with Idempotency-Key, over HTTP on DynamoDB Local. */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, readsKeys } from '../helpers/clients.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { createIdempotencyStore } from '../../lambdas/storage/idempotency-store.ts';
import { localClient } from '../../lambdas/storage/provision.ts';
import { expectError, jsonOf } from '../helpers/common.ts';
import { storedPetsNamed } from '../helpers/pets-table.ts';

let api: TestApi;
let client: DynamoDBClient;
const sent: string[] = [];

beforeAll(async () => {
  api = await startTestApi();
  client = localClient(api.dynamoEndpoint);
  // Counts the DynamoDB requests the functions' clients send (instrumentation only; nothing is mocked).
  // Each is labelled with its command and, for the state table, the kind of item (`rl` = the rate limiter's).
  // The authorizer's key lookups (a BatchGetItem of the key and its standing) are not the create's and are left out.
  onEveryClient(api, 'countRequests', (next, context) => (args) => {
    const input = args.input as { TableName?: string; Key?: { pk?: unknown }; Item?: { pk?: unknown } };
    if (!readsKeys(input)) {
      const pk = input.Key?.pk ?? input.Item?.pk;
      sent.push(`${context.commandName}${typeof pk === 'string' ? `:${pk.split('#')[0]}` : ''}`);
    }
    return next(args);
  });
});
afterAll(async () => {
  client?.destroy();
  await api?.close();
});
afterEach(() => api.clock.reset());

const create = (body: unknown, idempotencyKey?: string, key = api.keys.business) =>
  api.call('/pets', {
    method: 'POST',
    body: JSON.stringify(body),
    key,
    headers: {
      'Content-Type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
    },
  });

/** Every stored pet with this name, read straight from the table. */
/** The stored pets with this name as the API shows them (the audit field `createdBy` has its own test). */
const petsNamed = async (name: string) =>
  (await storedPetsNamed(client, api.tableEnv.PETS_TABLE_NAME!, name)).map(({ createdBy: _c, ...pet }) => pet);

/** The DynamoDB requests the service sent while fn ran, except the rate limiter's (the envelope's, not the create's). */
async function requestsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const from = sent.length;
  await fn();
  // The limiter's count (and the minute-history write beside a count that opens a minute) is not the create's own
  // request: which of them a request sends depends on where the minute boundary falls, not on the create.
  return sent.slice(from).filter((c) => c !== 'UpdateItemCommand:rl' && c !== 'UpdateItemCommand:rlh');
}

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

describe('POST /pets with Idempotency-Key', () => {
  it('replays a retried create: same pet and id, 201, Location, and only one pet exists', async () => {
    const name = unique('retry');
    const key = randomUUID();
    const first = await create({ name, categoryId: 5 }, key);
    expect(first.status).toBe(201);
    const pet = await jsonOf(first);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // A retry may serialise the same body differently: key order and whitespace do not matter.
    const again = await api.call('/pets', {
      method: 'POST',
      key: api.keys.business,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: `{ "categoryId": 5,\n "name": ${JSON.stringify(name)} }`,
    });
    expect(again.status).toBe(201);
    expect(await jsonOf(again)).toEqual(pet);
    expect(again.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await petsNamed(name)).toEqual([pet]);
  });

  it('answers 422 idempotency_key_reused for the same key with another body, and still replays the original', async () => {
    const name = unique('reuse');
    const key = randomUUID();
    const pet = await jsonOf(await create({ name, categoryId: 1 }, key));
    await expectError(await create({ name, categoryId: 2 }, key), 422, 'idempotency_key_reused');
    await expectError(await create({ name: `${name}-x`, categoryId: 1 }, key), 422, 'idempotency_key_reused');
    await expectError(await create({ name, categoryId: 1, status: 'sold' }, key), 422, 'idempotency_key_reused');
    const replay = await create({ name, categoryId: 1 }, key);
    expect(replay.status).toBe(201);
    expect(await jsonOf(replay)).toEqual(pet);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it('creates exactly one pet for 20 concurrent creates with one key: the others get 201 with that pet or 409', async () => {
    const name = unique('burst');
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 20 }, () => create({ name, categoryId: 9 }, key)));
    const stored = await petsNamed(name);
    expect(stored).toHaveLength(1);
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    for (const res of responses) {
      if (res.status === 201) {
        expect(await jsonOf(res)).toEqual(stored[0]);
      } else {
        expect(res.headers.get('retry-after')).toBe('1');
        await expectError(res, 409, 'idempotency_in_progress');
      }
    }
    // Once the first create has finished, a retry gets its result.
    const retry = await create({ name, categoryId: 9 }, key);
    expect(retry.status).toBe(201);
    expect(await jsonOf(retry)).toEqual(stored[0]);
  });

  it('scopes keys per API key: the same Idempotency-Key from two API keys makes two pets', async () => {
    const name = unique('scope');
    const key = randomUUID();
    const a = await create({ name, categoryId: 3 }, key, api.keys.business);
    const b = await create({ name, categoryId: 3 }, key, api.keys.pro);
    expect([a.status, b.status]).toEqual([201, 201]);
    const [petA, petB] = [await jsonOf(a), await jsonOf(b)];
    expect(petA.id).not.toBe(petB.id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    // Another client's body under the same key is not a reuse either.
    expect((await create({ name: `${name}-other`, categoryId: 4 }, key, api.keys.free)).status).toBe(201);
    expect(await petsNamed(name)).toHaveLength(2);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'caf\u00e9'],
    ['a control character', 'a\tb'],
  ])('rejects an Idempotency-Key that is %s with 400, creating nothing', async (_, value) => {
    const name = unique('badkey');
    const cmds = await requestsOf(async () =>
      expectError(await create({ name, categoryId: 1 }, value), 400, 'validation_failed'),
    );
    expect(cmds).toEqual([]);
    expect(await petsNamed(name)).toEqual([]);
  });

  it('accepts 255 printable ASCII characters, spaces and punctuation included', async () => {
    const key = `${'~ !"#$%&()*+,-./:;<=>?@[\\]^_`{|}'}${'z'.repeat(223)}`;
    expect(key).toHaveLength(255);
    const name = unique('longkey');
    const first = await jsonOf(await create({ name, categoryId: 1 }, key));
    expect(await jsonOf(await create({ name, categoryId: 1 }, key))).toEqual(first);
    expect(await petsNamed(name)).toHaveLength(1);
  });

  it('replays for 24 h: 25 h later the same key and body make a new pet', async () => {
    const name = unique('expiry');
    const key = randomUUID();
    const start = Date.now();
    const first = await jsonOf(await create({ name, categoryId: 2 }, key));
    api.clock.set(() => start + 23 * 3_600_000);
    expect(await jsonOf(await create({ name, categoryId: 2 }, key))).toEqual(first);
    api.clock.set(() => start + 25 * 3_600_000);
    const later = await create({ name, categoryId: 2 }, key);
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    const second = await jsonOf(later);
    expect(second.id).not.toBe(first.id);
    // The new record is live: another retry replays the new pet.
    expect(await jsonOf(await create({ name, categoryId: 2 }, key))).toEqual(second);
    expect(await petsNamed(name)).toHaveLength(2);
  });

  it('answers 409 while an attempt holds the key; a crashed attempt frees it after 30 s', async () => {
    const name = unique('crash');
    const key = randomUUID();
    const keyId = `dev_${hashKey(api.keys.business).slice(0, 12)}`; // as lib/local/keys.ts seeds it
    const start = Date.now();
    const { fingerprint } = await import('../../lambdas/domain/idempotency.ts');
    // An attempt that claimed the key and then died before writing anything.
    const claimed = await createIdempotencyStore(api.storage).claim(
      { keyId, key },
      {
        status: 'IN_PROGRESS',
        fingerprint: fingerprint({ name, categoryId: 6 }),
        token: 'crashed',
        expiresAtMs: start + 30_000,
      },
      start,
    );
    expect(claimed).toBeUndefined();
    const busy = await create({ name, categoryId: 6 }, key);
    expect(busy.headers.get('retry-after')).toBe('1');
    await expectError(busy, 409, 'idempotency_in_progress');
    await expectError(await create({ name, categoryId: 7 }, key), 422, 'idempotency_key_reused');
    api.clock.set(() => start + 31_000);
    const retry = await create({ name, categoryId: 6 }, key);
    expect(retry.status).toBe(201);
    expect(await petsNamed(name)).toEqual([await jsonOf(retry)]);
  });
});

describe('DynamoDB requests per create', () => {
  it('without the header: unchanged (one pet Put), no idempotency record', async () => {
    await create({ name: unique('warm'), categoryId: 1 }); // the id block is reserved already
    expect(await requestsOf(() => create({ name: unique('plain'), categoryId: 1 }))).toEqual(['PutItemCommand']);
  });

  it('with the header: claim + one transaction on a first create, one request on a replay', async () => {
    const name = unique('count');
    const key = randomUUID();
    await create({ name: unique('warm'), categoryId: 1 }); // the id block is reserved already
    // The claim, then one transaction writing the pet and completing the record.
    expect(await requestsOf(() => create({ name, categoryId: 1 }, key))).toEqual([
      'PutItemCommand:idem',
      'TransactWriteItemsCommand',
    ]);
    // Replay and reuse: the failed conditional claim returns the record; nothing else.
    expect(await requestsOf(() => create({ name, categoryId: 1 }, key))).toEqual(['PutItemCommand:idem']);
    expect(await requestsOf(() => create({ name, categoryId: 2 }, key))).toEqual(['PutItemCommand:idem']);
  });
});
