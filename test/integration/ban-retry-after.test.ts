/**
 * What a banned key is told at the gateway, over HTTP through the local gateway with the template's authorizer cache
 * (60 s), as deployed: the authorizer's Deny carries when the key is served again, and the ACCESS_DENIED response maps
 * it into Retry-After, X-RateLimit-Reset and its message. A repeat ban (twice a first ban's length) is told its real
 * rest, not a first ban's 900 s; a replay of the cached Deny errs long, never short; a ban that ends before the cached
 * Deny does is told the cached Deny's end, so a client that waits Retry-After is served, never refused again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BAN_POLICY, banSecondsFor } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

let api: TestApi;
let ttl: number;
beforeAll(async () => {
  // The template's authorizer cache: a Deny is replayed for its TTL, as on API Gateway.
  api = await startTestApi({ authCacheTtlSeconds: undefined });
  ttl = api.model.authorizers.values().next().value!.ttlSeconds;
});
afterAll(() => api?.close());

interface Seen {
  readonly status: number;
  readonly code?: string;
  readonly message?: string;
  readonly retryAfter: string | null;
  readonly reset: string | null;
}

async function call(key: string, atSec: number): Promise<Seen> {
  api.clock.set(() => atSec * 1000);
  const res = await api.call('/pets?limit=1', { key });
  const body = (await res.json()) as { code?: string; message?: string };
  return {
    status: res.status,
    ...(res.ok ? {} : { code: body.code, message: body.message }),
    retryAfter: res.headers.get('retry-after'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

/** Sends 5 requests a second from `fromSec`, ignoring every 429, until one is key_banned: that answer and when. */
async function floodUntilBanned(key: string, fromSec: number): Promise<{ at: number; seen: Seen }> {
  for (let i = 0; i < 5 * 600; i++) {
    const at = fromSec + i / 5;
    const seen = await call(key, at);
    if (seen.code === 'key_banned') return { at, seen };
  }
  throw new Error('never banned');
}

it("a repeat ban's 429 at the gateway carries its real rest, and a client that waits it is served", async () => {
  const key = api.keys.free;
  const start = Date.UTC(2031, 2, 4, 9, 0, 0) / 1000;

  // The first ban of the day: the function answers it (the cached Allow still lets requests through) and records it.
  const first = await floodUntilBanned(key, start);
  const firstEnd = Number(first.seen.reset);
  expect(firstEnd - Math.floor(first.at)).toBe(BAN_POLICY.banSeconds);
  // The limiter's ban, told as one (an admin's says "by an administrator": admin-ban-wording.test.ts).
  expect(first.seen.message).toBe(
    `The API key is banned until ${new Date(firstEnd * 1000).toISOString()} for repeated requests over its rate limit.`,
  );

  // After it (and the cached Deny) end, the client does it again: the day's second ban is twice as long.
  const second = await floodUntilBanned(key, firstEnd + ttl + 1);
  const secondEnd = Number(second.seen.reset);
  expect(secondEnd - Math.floor(second.at)).toBe(banSecondsFor(2));

  // Once the cached Allow has expired, the gateway refuses the key: the authorizer's Deny says when it ends.
  const asked = Math.ceil(second.at) + ttl;
  const denied = await call(key, asked);
  expect(denied).toMatchObject({ status: 429, code: 'key_banned' });
  expect(Number(denied.retryAfter)).toBe(secondEnd - asked);
  expect(Number(denied.retryAfter)).toBeGreaterThan(BAN_POLICY.banSeconds);
  expect(Number(denied.reset)).toBe(secondEnd);
  expect(denied.message).toBe(
    `The API key is banned until ${new Date(secondEnd * 1000).toISOString()} for repeated requests over its rate limit.`,
  );

  // Half a TTL later API Gateway replays the cached Deny unchanged: Retry-After is as long as it was (it errs long by
  // the answer's age), X-RateLimit-Reset is still exact.
  const replayedAt = asked + ttl / 2;
  const replayed = await call(key, replayedAt);
  expect(replayed).toMatchObject({
    status: 429,
    code: 'key_banned',
    retryAfter: denied.retryAfter,
    reset: denied.reset,
  });

  // A client that waits the replay's Retry-After comes back after the ban: served.
  expect((await call(key, replayedAt + Number(replayed.retryAfter))).status).toBe(200);
});

it('a ban that ends before the cached Deny does is told the Deny’s end: waiting Retry-After is never refused again', async () => {
  const key = api.keys.pro;
  const now = Date.UTC(2031, 2, 5, 9, 0, 0) / 1000;
  // 10 s of a ban left when the authorizer is asked (as the function records a ban it answered).
  await noteStanding(api.storage, hashKey(key), { bannedUntil: now + 10 });

  const denied = await call(key, now);
  expect(denied).toMatchObject({ status: 429, code: 'key_banned', retryAfter: String(ttl), reset: String(now + ttl) });

  // At the ban's end the cached Deny still refuses the key: a client told "10 s" would have been refused again.
  expect(await call(key, now + 10)).toMatchObject({ status: 429, code: 'key_banned', reset: String(now + ttl) });
  // Told the cached Deny's end, it is served when it comes back.
  expect((await call(key, now + Number(denied.retryAfter))).status).toBe(200);
});
