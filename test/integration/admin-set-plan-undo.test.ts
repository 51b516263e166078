/**
 * A plan change says what it did to the key's standing, and a change back undoes the admin's own mistake: a busy
 * Business key downgraded to Free by error has its day spent (said at once) or gets banned for the 429s the lower
 * limits give it; `set-plan … business` back the same day lifts that ban, sets the day's ban count back (its next ban
 * is not escalated) and says so, and the client is served. A ban the key had before the move, or a move elsewhere,
 * is left alone. Over HTTP through the local gateway (uncached authorizer), the admin tool `--local` on its clock.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { codeOf } from '../helpers/key-standing.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdminOnApiClock());
});
afterAll(() => api?.close());

const status = async (key: string) => codeOf(await api.call('/pets?limit=1', { key }));

/** The key's first day item as the limiter leaves it at `nowMs`: `d` today, a ban and the day's bans if given. */
async function counters(keyId: string, nowMs: number, c: { d: number; banUntil?: number; bans?: number }) {
  api.clock.set(() => nowMs);
  const w = windowsAt(nowMs);
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.state,
      Item: { ...shardKey(keyId, w.dayStart, 0), ms: w.minuteStart - 60, m: 0, ...c },
    }),
  );
}
async function bansToday(keyId: string, nowMs: number) {
  const out = await api.storage.doc.send(
    new GetCommand({ TableName: api.storage.tables.state, Key: shardKey(keyId, windowsAt(nowMs).dayStart, 0) }),
  );
  return Number(out.Item?.bans ?? 0);
}
async function businessKey(t: number) {
  api.clock.set(() => t);
  // Each test's own key: the tests' clocks are days apart but not in order, so a key an earlier test made (on a
  // later day) would otherwise be taken for this create's lost answer.
  const r = await runLocalAdmin(deps, 'keys', 'create', '--owner', 'busy', '--plan', 'business', '--another', '--json');
  return JSON.parse(r.out) as { keyId: string; key: string };
}

it('says the spent day a downgrade causes, and the move back lifts it', async () => {
  const t = Date.UTC(2034, 6, 1, 12, 0, 0);
  const { keyId, key } = await businessKey(t);
  await counters(keyId, t, { d: 3_000 });
  const down = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'free');
  expect(down).toMatchObject({ code: 0, err: '' });
  expect(down.out).toContain(
    `Its day is now SPENT: 3000 requests today, over free's 1000/day (429 until 2034-07-02T00:00:00.000Z; \`keys unban ${keyId}\` lifts it)`,
  );
  expect(await status(key)).toBe('429 quota_exceeded');
  const back = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'business');
  expect(back.out).toContain("Lifted its spent day: 3000 requests today, within business's 100000/day");
  expect(back.out).toContain("Back where it was before today's first plan change: it caused no ban to lift");
  expect(await status(key)).toBe('200');
}, 60_000);

it('a move back the same day lifts the ban the mistaken move caused and its escalation', async () => {
  const t = Date.UTC(2034, 6, 2, 12, 0, 0);
  const { keyId, key } = await businessKey(t);
  await counters(keyId, t, { d: 500 });
  const down = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'free');
  expect(down.out).not.toMatch(/SPENT|BANNED/);
  // Two minutes later its traffic, far over Free's 60/min, has had the limiter ban it (its first ban today).
  const banned = t + 120_000;
  await counters(keyId, banned, { d: 560, banUntil: banned / 1000 + 900, bans: 1 });
  expect(await status(key)).toBe('429 key_banned');
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).toContain('BANNED until 2034-07-02T12:17:00.000Z');

  api.clock.set(() => banned + 60_000);
  const back = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'business');
  expect(back).toMatchObject({ code: 0, err: '' });
  expect(back.out).toContain(
    "Back where it was before today's first plan change: lifted the ban that change caused (until " +
      "2034-07-02T12:17:00.000Z); today's bans set back to 0 (its next ban is not escalated)",
  );
  expect(back.out).toContain('Lifted its ban (until 2034-07-02T12:17:00.000Z)');
  expect(back.out).not.toMatch(/Still BANNED/);
  expect(await status(key)).toBe('200');
  expect(await bansToday(keyId, banned)).toBe(0);
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).not.toMatch(/BANNED|PROBATION|Pending/);
  const history = JSON.parse((await runLocalAdmin(deps, 'keys', 'history', keyId, '--json')).out);
  expect(history.entries.at(-1).result).toMatch(/→ business .*what that move caused is lifted$/);
  expect(history.entries.at(-1).standingBefore).toMatchObject({ bannedUntil: '2034-07-02T12:17:00.000Z' });
}, 60_000);

it('a busy key downgraded by error is banned by its own traffic; the move back serves it, its next ban unescalated', async () => {
  const t = Date.UTC(2034, 6, 4, 12, 0, 0);
  const { keyId, key } = await businessKey(t);
  expect((await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'free')).code).toBe(0);
  // Its clients keep sending at Business rates: Free's 60 a minute, then 429s, and for the flood of them a ban.
  const seen = new Map<string, number>();
  for (let i = 0; i < 50 && (await bansToday(keyId, t)) === 0; i++) {
    // A second apart (the limiter writes a container's 429s towards a ban at most so often), in the same minute.
    api.clock.set(() => t + 1_000 * i);
    const codes = await Promise.all(Array.from({ length: 10 }, () => status(key)));
    for (const c of codes) seen.set(c, (seen.get(c) ?? 0) + 1);
  }
  expect(seen.get('200')).toBe(60);
  expect(seen.get('429 rate_limited')).toBeGreaterThan(100);
  expect(await bansToday(keyId, t)).toBe(1);
  api.clock.set(() => t + 61_000);
  expect(await status(key)).toBe('429 key_banned');
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).toMatch(/BANNED until 2034-07-04T12:15:\d\d/);
  const back = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'business');
  expect(back.out).toMatch(/Back where it was before today's first plan change: lifted the ban that change caused/);
  expect(back.out).toContain("today's bans set back to 0 (its next ban is not escalated)");
  expect(await status(key)).toBe('200');
  expect(await bansToday(keyId, t)).toBe(0);
}, 60_000);

it('a ban the key had before the move, or a move elsewhere, is not lifted by set-plan', async () => {
  const t = Date.UTC(2034, 6, 3, 12, 0, 0);
  const { keyId, key } = await businessKey(t);
  // Banned (its second ban today) before any admin touched it.
  await counters(keyId, t, { d: 500, banUntil: t / 1000 + 1800, bans: 2 });
  expect(await status(key)).toBe('429 key_banned');
  expect((await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'free')).out).toContain(
    `Still BANNED until 2034-07-03T12:30:00.000Z (\`keys unban ${keyId}\` lifts it)`,
  );
  const back = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'business');
  expect(back.out).toContain("Back where it was before today's first plan change: it caused no ban to lift");
  expect(back.out).toContain('Still BANNED until 2034-07-03T12:30:00.000Z');
  expect(await status(key)).toBe('429 key_banned');
  expect(await bansToday(keyId, t)).toBe(2);

  // Elsewhere: Business → Free, banned there, then Pro: not back, so the ban stands.
  const later = t + 3_600_000;
  await counters(keyId, later, { d: 500 });
  await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'free');
  await counters(keyId, later + 60_000, { d: 560, banUntil: later / 1000 + 60 + 900, bans: 3 });
  const elsewhere = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'pro');
  expect(elsewhere.out).toContain('Still BANNED until 2034-07-03T13:16:00.000Z');
  expect(elsewhere.out).not.toMatch(/Back where it was/);
  expect(await status(key)).toBe('429 key_banned');
}, 60_000);
