/**
 * An admin's ban is told to the client as an admin's, by the function and by the gateway alike, and a ban of the
 * limiter's as one for requests over the rate limit. Over the CLI (`keys ban`) and HTTP through the local gateway
 * with the template's authorizer cache (60 s), as deployed: within the cached Allow the function refuses the key
 * (its counters carry the ban; the key's standing says whose it is), after it the authorizer's Deny does.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { standingKey } from '../../lambdas/storage/standing.ts';
import { runLocalAdmin } from '../helpers/admin.ts';
import { cachedAdminFixture } from '../helpers/key-standing.ts';

const fixture = cachedAdminFixture('pro');
const perMinute = PLANS.pro.limits!.perMinute;

interface Seen {
  readonly code: string;
  readonly message?: string;
  readonly limit: string | null;
  readonly reset: string | null;
  readonly retryAfter: string | null;
}

async function call(atMs: number): Promise<Seen> {
  fixture.api.clock.set(() => atMs);
  const res = await fixture.api.call('/pets?limit=1', { key: fixture.key });
  const body = (await res.json()) as { code?: string; message?: string };
  return {
    code: res.ok ? String(res.status) : `${res.status} ${body.code}`,
    ...(res.ok ? {} : { message: body.message }),
    limit: res.headers.get('x-ratelimit-limit'),
    reset: res.headers.get('x-ratelimit-reset'),
    retryAfter: res.headers.get('retry-after'),
  };
}

const adminWording = (endSec: number) =>
  `The API key is banned by an administrator until ${new Date(endSec * 1000).toISOString()}.`;

it('`keys ban` then a request: the function and the gateway both say an administrator banned the key', async () => {
  const noon = Date.UTC(2034, 5, 7, 12, 0, 0);
  // Served, and the authorizer's Allow cached for the template's TTL.
  expect((await call(noon)).code).toBe('200');

  const banned = await runLocalAdmin(fixture.deps, 'keys', 'ban', fixture.keyId, '--minutes', '30');
  expect(banned).toMatchObject({ code: 0, err: '' });
  const end = noon / 1000 + 30 * 60;

  // Within the cached Allow the function refuses the key (its X-RateLimit-Limit is the key's minute limit).
  const fromFunction = await call(noon + 1_000);
  expect(fromFunction).toEqual({
    code: '429 key_banned',
    message: adminWording(end),
    limit: String(perMinute),
    reset: String(end),
    retryAfter: String(end - noon / 1000 - 1),
  });
  // A refusal this container already knows is worded the same, without asking storage again.
  expect((await call(noon + 2_000)).message).toBe(adminWording(end));

  // After it, the authorizer denies the key: the gateway's answer says the same, with the same headers.
  const asked = noon / 1000 + 61;
  const fromGateway = await call(asked * 1000);
  expect(fromGateway).toEqual({
    code: '429 key_banned',
    message: adminWording(end),
    limit: String(perMinute),
    reset: String(end),
    retryAfter: String(end - asked),
  });

  // A gateway standing a function recorded with the same end (unmarked: a ban of the limiter's ending then) is marked
  // as the admin's by the admin's ban to that end, in its transaction.
  await fixture.api.storage.doc.send(
    new PutCommand({
      TableName: fixture.api.storage.tables.state,
      Item: { ...standingKey(hashKey(fixture.key)), banUntil: end, expiresAt: end + 86_400 },
    }),
  );
  const unmarked = await call((asked + 61) * 1000);
  expect(unmarked.message).toMatch(/for repeated requests over its rate limit\.$/);
  fixture.api.clock.set(() => noon);
  expect(await runLocalAdmin(fixture.deps, 'keys', 'ban', fixture.keyId, '--minutes', '30')).toMatchObject({ code: 0 });
  expect((await call((asked + 122) * 1000)).message).toBe(adminWording(end));

  // Lifted, the key is served once the cached Deny expires.
  expect(await runLocalAdmin(fixture.deps, 'keys', 'unban', fixture.keyId)).toMatchObject({ code: 0 });
  expect((await call((asked + 183) * 1000)).code).toBe('200');
}, 120_000);
