/**
 * `keys unban` lifts a ban before it ends, and the key is served again within the authorizer cache TTL: the gateway
 * (whose authorizer read the ban from the key's standing) and a warm function that learnt of the ban itself both let
 * it through. Over HTTP through the local gateway with the template's authorizer TTL, on the test's clock.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { realDeps } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin } from '../helpers/admin.ts';
import { startTestApi, uniquePrefix, type TestApi } from '../helpers/api.ts';

const key = `pro_${randomBytes(16).toString('hex')}`;
const keyId = `dev_${hashKey(key).slice(0, 12)}`;
let api: TestApi;
let deps: AdminDeps;

beforeAll(async () => {
  const prefix = uniquePrefix();
  api = await startTestApi({ tablePrefix: prefix, devKeys: [{ key, plan: 'pro' }], authCacheTtlSeconds: undefined });
  process.env.ANIMAL_STORE_DYNAMODB_PORT = new URL(api.dynamoEndpoint).port;
  process.env.ANIMAL_STORE_TABLE_PREFIX = prefix;
  deps = { ...(await realDeps({ local: true })), now: api.clock.now };
});
afterAll(() => api?.close());

const codeOf = async (res: Response) =>
  `${res.status} ${res.ok ? '' : ((await res.json()) as { code: string }).code}`.trim();

it('a banned key is served again within the authorizer TTL after `keys unban`, by the gateway and a warm function', async () => {
  const noon = Date.UTC(2033, 6, 7, 12, 0, 0);
  api.clock.set(() => noon);
  const dayStart = noon / 1000 - ((noon / 1000) % 86_400);
  const notBanned = await runLocalAdmin(deps, 'keys', 'unban', keyId);
  expect(notBanned).toMatchObject({ code: 0, out: `${keyId} is not banned: nothing changed` });
  // Banned for 15 minutes, as the limiter writes it on the key's counters.
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.state,
      Item: { ...shardKey(keyId, dayStart, 0), ms: noon / 1000 - 60, m: 0, d: 5, banUntil: noon / 1000 + 900 },
    }),
  );
  // The function refuses it (and remembers the ban), and records the ban where the authorizer reads it.
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('429 key_banned');
  api.clock.set(() => noon + 61_000);
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('429 key_banned');

  const lifted = await runLocalAdmin(deps, 'keys', 'unban', keyId);
  expect(lifted.err).toBe('');
  expect(lifted.out).toMatch(new RegExp(`^Unbanned ${keyId} \\(was banned until 2033-07-07T12:15:00.000Z\\)`));
  expect((await runLocalAdmin(deps, 'keys', 'usage', keyId, '--json')).out).toMatch(/"bannedUntil": null/);
  // One authorizer TTL later the gateway and the warm function both serve it.
  api.clock.set(() => noon + 122_000);
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
}, 60_000);
