/**
 * A limiter's ban reaches the gateway within its minute with the authorizer cache off (TTL 0), over HTTP through the
 * local gateway on the test's clock: a Free key flooded by 48 requests in flight, ignoring every 429. The request
 * whose 429 decides the ban is told key_banned and records it where the authorizer reads it, so the gateway refuses
 * the key from then on; only requests already past it reach the function.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PLANS, banThreshold } from '../../contract/plans.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { countInvocations } from '../helpers/key-standing.ts';

let api: TestApi;
/** Invocations of the function behind GET /pets: a request that reached it was not refused by the gateway. */
let reached: { readonly count: number };

beforeAll(async () => {
  api = await startTestApi(); // authorizer cache TTL 0
  reached = countInvocations(api, LIST_PETS.operationId);
});
afterAll(() => api?.close());

it('a ban decided in a flood of 48 in flight is refused by the gateway within the same minute', async () => {
  const key = api.keys.free;
  const free = PLANS.free.limits!;
  const minute = Date.UTC(2034, 4, 6, 10, 0, 0);
  // 2,000 requests over 50 s of the minute: the clock moves 25 ms with each request sent.
  let sent = 0;
  api.clock.set(() => minute + sent * 25);
  const answers: { code: string; sentAt: number }[] = [];
  /** Requests sent by the time the first key_banned answer arrived (its ban was recorded before it was sent). */
  let sentWhenBanTold: number | undefined;
  const worker = async () => {
    while (sent < 2_000) {
      const sentAt = sent++;
      const res = await api.call('/pets?limit=1', { key });
      const code = res.ok ? '200' : ((await res.json()) as { code: string }).code;
      if (code === 'key_banned') sentWhenBanTold ??= sent;
      answers.push({ code, sentAt });
    }
  };
  await Promise.all(Array.from({ length: 48 }, worker));

  const tally = (code: string) => answers.filter((a) => a.code === code).length;
  const afterBan = answers.filter((a) => a.sentAt >= sentWhenBanTold!);
  const figures = {
    ok: tally('200'),
    rateLimited: tally('rate_limited'),
    keyBanned: tally('key_banned'),
    reachedFunction: reached.count,
    banToldAtMs: sentWhenBanTold! * 25,
    sentAfterBanTold: afterBan.length,
  };
  console.log('TTL 0 flood', figures);
  expect(figures.ok).toBe(free.perMinute);
  // Banned once its 429s in the minute pass the threshold; the requests in flight then may add a few.
  expect(figures.rateLimited).toBeGreaterThan(banThreshold(free));
  expect(figures.rateLimited).toBeLessThan(banThreshold(free) + 4 * 48);
  expect(figures.keyBanned).toBe(2_000 - free.perMinute - figures.rateLimited);
  expect(figures.banToldAtMs).toBeLessThan(60_000);
  // Every request sent once the ban was told is refused by the gateway: no function runs for it.
  expect(afterBan.length).toBeGreaterThan(1_500);
  expect(afterBan.every((a) => a.code === 'key_banned')).toBe(true);
  expect(reached.count).toBeLessThanOrEqual(sentWhenBanTold!);

  // Still in the minute, one more request: refused at the gateway, no function runs.
  api.clock.set(() => minute + 55_000);
  const before = reached.count;
  const res = await api.call('/pets?limit=1', { key });
  expect(res.status).toBe(429);
  expect(((await res.json()) as { code: string }).code).toBe('key_banned');
  expect(reached.count).toBe(before);
}, 120_000);
