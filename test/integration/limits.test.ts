/** Plans and rate limits, against DynamoDB Local and over HTTP through the local gateway. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BAN_POLICY, banThreshold } from '../../contract/plans.ts';
import { quietTelemetry, startTestApi, type TestApi } from '../helpers/api.ts';
import { windowsAt, type LimitCounters } from '../../lambdas/domain/rate-limit.ts';
import { createLimiter, type Limiter } from '../../lambdas/domain/limiter.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import { readUsageHistory } from '../../lambdas/storage/usage-history.ts';

let api: TestApi;
let counters: LimitCounters;
/** One container's limiter on the real adapter. */
let limiter: Limiter;

beforeAll(async () => {
  api = await startTestApi();
  counters = createLimitStore(api.storage, quietTelemetry());
  limiter = createLimiter(counters);
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

let t0 = Date.UTC(2027, 0, 1, 12, 0, 0);
/** A fresh minute far from the others, so tests never share windows. */
function freshMinute(): number {
  t0 += 3 * 86_400_000;
  return t0;
}

describe('limiter on DynamoDB Local', () => {
  const plan = { perMinute: 5, perDay: 8 };

  it('counts both windows and rolls the minute over', async () => {
    const start = freshMinute();
    const subject = 'count';
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push(await limiter.consume(subject, plan, windowsAt(start + i)));
    expect(seen.map((c) => c.allowed)).toEqual([true, true, true, true, true, false]);
    expect(seen[4]).toMatchObject({ minuteRemaining: 0, dayRemaining: 3 });
    expect(seen[5]).toMatchObject({ allowed: false, reason: 'minute' });
    // Next minute: the minute window opens again, the day keeps counting until its limit.
    const next = [];
    for (let i = 0; i < 4; i++) next.push(await limiter.consume(subject, plan, windowsAt(start + 60_000 + i)));
    expect(next.map((c) => c.allowed)).toEqual([true, true, true, false]);
    expect(next[3]).toMatchObject({ allowed: false, reason: 'day' });
    // Next day: both windows are fresh.
    expect(await limiter.consume(subject, plan, windowsAt(start + 86_400_000))).toMatchObject({
      allowed: true,
      minuteRemaining: 4,
      dayRemaining: 7,
    });
  });

  it('admits exactly the limit out of 150 parallel requests on a fresh window, with exact remaining counts', async () => {
    const w = windowsAt(freshMinute());
    const limits = { perMinute: 60, perDay: 1000 };
    const results = await Promise.all(Array.from({ length: 150 }, () => limiter.consume('parallel', limits, w)));
    const admitted = results.flatMap((r) => (r.allowed ? [r.minuteRemaining] : []));
    expect(admitted.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect((await counters.usage('parallel', limits, w)).dayCount).toBe(60); // rejected requests consumed nothing
  });

  it('opens a minute with one round trip for the count and the usage history together, recording the day count', async () => {
    // Every DynamoDB request the adapter makes, in the order it starts and ends.
    const events: string[] = [];
    const spy = <D extends { send: (...a: never[]) => Promise<unknown> }>(doc: D, via: string): D =>
      Object.assign(Object.create(doc) as D, {
        send: async (...args: Parameters<D['send']>) => {
          const input = (args[0] as { input: { Key?: { pk?: string } } }).input;
          const name = `${via} ${String(input.Key?.pk).split('#')[0]}`;
          events.push(`start ${name}`);
          try {
            return await doc.send(...args);
          } finally {
            events.push(`end ${name}`);
          }
        },
      });
    const storage = {
      ...api.storage,
      doc: spy(api.storage.doc, 'resending'),
      once: { ...api.storage.once, doc: spy(api.storage.once.doc, 'once') },
    };
    const open = createLimiter(createLimitStore(storage, quietTelemetry()));
    const limits = { perMinute: 5, perDay: 100 };
    const start = freshMinute();
    for (let i = 0; i < 3; i++) expect((await open.consume('opens', limits, windowsAt(start + i))).allowed).toBe(true);
    events.length = 0;
    // The next minute: the count's condition fails (its minute is over), then the opening write and the history's.
    expect((await open.consume('opens', limits, windowsAt(start + 60_000))).allowed).toBe(true);
    expect(events).toEqual([
      'start once rl',
      'end once rl',
      'start resending rlh',
      'start once rl',
      ...(events[4] === 'end once rl' ? ['end once rl', 'end resending rlh'] : ['end resending rlh', 'end once rl']),
    ]);
    const history = await readUsageHistory(api.storage, 'opens', limits, windowsAt(start + 61_000));
    expect(history).toEqual([
      { minuteStart: windowsAt(start).minuteStart, dayCount: 1 },
      { minuteStart: windowsAt(start + 60_000).minuteStart, dayCount: 4 },
    ]);
  });

  it('bans a key whose 429s in one window exceed what a fleet could cause, until the ban ends, not its neighbours', async () => {
    const start = freshMinute();
    const tight = { perMinute: 2, perDay: 1000 };
    await limiter.consume('banned', tight, windowsAt(start));
    await limiter.consume('banned', tight, windowsAt(start));
    // Requests that keep coming after their 429s, one every 20 ms for 3 s: recorded once a second.
    const rejected = [];
    for (let i = 0; i <= banThreshold(tight) + 50; i++)
      rejected.push(await limiter.consume('banned', tight, windowsAt(start + 20 * i)));
    expect(rejected.slice(0, banThreshold(tight)).every((r) => !r.allowed && r.reason === 'minute')).toBe(true);
    const banned = rejected.find((r) => !r.allowed && r.reason === 'banned');
    expect(banned).toBeDefined();
    // Another container learns of it from the item, not from its own 429s.
    const other = createLimiter(counters);
    const during = await other.consume('banned', tight, windowsAt(start + 5 * 60_000));
    expect(during).toMatchObject({ allowed: false, reason: 'banned' });
    const banUntil = (during as { banUntil: number }).banUntil;
    expect(banUntil - Math.floor(start / 1000)).toBeGreaterThanOrEqual(BAN_POLICY.banSeconds);
    expect(await other.consume('neighbour', tight, windowsAt(start))).toMatchObject({ allowed: true });
    expect(await other.consume('banned', tight, windowsAt(banUntil * 1000))).toMatchObject({ allowed: true });
  });
});

describe('limits over HTTP', () => {
  const rl = (r: Response) => ({
    limit: r.headers.get('x-ratelimit-limit'),
    remaining: r.headers.get('x-ratelimit-remaining'),
    reset: r.headers.get('x-ratelimit-reset'),
  });

  it('shows the plan limit: Free 60, Pro 300, Business 1000', async () => {
    api.clock.set(() => freshMinute());
    expect(rl(await api.call('/pets', { key: api.keys.free })).limit).toBe('60');
    expect(rl(await api.call('/pets', { key: api.keys.pro })).limit).toBe('300');
    expect(rl(await api.call('/pets', { key: api.keys.business })).limit).toBe('1000');
  });

  it('carries X-RateLimit-* on 200, 201, 400, 401, 404, 405, 501 and 429 responses', async () => {
    const now = freshMinute();
    api.clock.set(() => now);
    const reset = String(Math.floor(now / 1000) - (Math.floor(now / 1000) % 60) + 60);
    const responses = [
      await api.call('/pets'),
      await api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'a', categoryId: 1 }) }),
      await api.call('/pets?limit=0'),
      await api.call('/pets/987654321'),
      await api.call('/store/orders'),
      await api.call('/pets', { key: '' }),
      await api.call('/unknown'),
      await api.call('/pets', { method: 'DELETE' }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 201, 400, 404, 501, 401, 404, 405]);
    for (const r of responses.slice(0, 5)) {
      const h = rl(r);
      expect(Number(h.limit)).toBeGreaterThan(0);
      expect(Number(h.remaining)).toBeGreaterThanOrEqual(0);
      expect(Number(h.reset)).toBeGreaterThan(now / 1000 - 1);
    }
    // API Gateway's own answers (gateway responses, MOCK methods) cannot count: the template gives them static 0s.
    for (const r of responses.slice(5)) expect(rl(r)).toEqual({ limit: '0', remaining: '0', reset: '0' });
    // The counted ones (authenticated) count down in the Free key's minute window.
    expect(responses.slice(0, 5).map((r) => rl(r).remaining)).toEqual(['59', '58', '57', '56', '55']);
    expect(rl(responses[0]!).reset).toBe(reset);
  });

  it("answers 429 with the Error object and Retry-After past a Free key's 60/min, and resets in the next minute", async () => {
    const now = freshMinute() + 15_000; // 45 s left in the minute
    api.clock.set(() => now);
    const results = [];
    for (let i = 0; i < 61; i++) results.push(await api.call('/pets?limit=1'));
    expect(results.slice(0, 60).every((r) => r.status === 200)).toBe(true);
    const over = results[60]!;
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({
      code: 'rate_limited',
      message: expect.stringMatching(/60 requests per minute/),
      status: 429,
    });
    expect(over.headers.get('retry-after')).toBe('45');
    expect(rl(over)).toEqual({ limit: '60', remaining: '0', reset: String(Math.floor(now / 1000) + 45) });
    api.clock.set(() => now + 45_000);
    const next = await api.call('/pets?limit=1');
    expect(next.status).toBe(200);
    expect(rl(next).remaining).toBe('59');
  });
});

describe('authorizer cache', () => {
  it('lets a policy cached on a GET serve a POST and every other route', async () => {
    const cached = await startTestApi({ authCacheTtlSeconds: 60 });
    try {
      expect((await cached.call('/pets', { key: cached.keys.pro })).status).toBe(200);
      const created = await cached.call('/pets', {
        key: cached.keys.pro,
        method: 'POST',
        body: JSON.stringify({ name: 'c', categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      expect((await cached.call(`/pets/${id}`, { key: cached.keys.pro })).status).toBe(200);
      expect((await cached.call('/store/orders', { key: cached.keys.pro })).status).toBe(501);
    } finally {
      await cached.close();
    }
  });
});
