/**
 * The limiter's rules on an injected clock: window arithmetic, each write's next step, lease sizes, the ban, and
 * the whole limiter (leases, caches, bans) in simulations of many containers on in-memory counters with the
 * storage adapter's semantics (bench/lib/limiter-sim.ts; the same scenarios run on DynamoDB Local in the bench).
 */
import { describe, expect, it } from 'vitest';
import { BAN_POLICY, LIMITER, banSecondsFor, banThreshold, PLANS, type PlanLimits } from '../../contract/plans.ts';
import { banDays, leaseSize, takeStep, windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { createLimiter } from '../../lambdas/domain/limiter.ts';
import { peakWindowRejections, peakWindowShare, seeded, simulate } from '../../bench/lib/limiter-sim.ts';
import { fleet, steady } from '../../bench/lib/traffic.ts';
import { MemoryCounters } from '../helpers/memory-counters.ts';

const plan = { perMinute: 5, perDay: 8 };
const at = (iso: string) => Date.parse(iso);
const sec = (iso: string) => at(iso) / 1000;

describe('windowsAt', () => {
  it('aligns minute and day windows to UTC and rolls both over at midnight', () => {
    const before = windowsAt(at('2031-05-06T23:59:59.999Z'));
    expect(before).toEqual({
      nowMs: at('2031-05-06T23:59:59.999Z'),
      nowSec: sec('2031-05-06T23:59:59Z'),
      minuteStart: sec('2031-05-06T23:59:00Z'),
      minuteReset: sec('2031-05-07T00:00:00Z'),
      dayStart: sec('2031-05-06T00:00:00Z'),
      dayReset: sec('2031-05-07T00:00:00Z'),
    });
    const after = windowsAt(at('2031-05-07T00:00:00.000Z'));
    expect(after.minuteStart).toBe(before.minuteReset);
    expect(after.dayStart).toBe(before.dayReset);
  });
});

describe('takeStep: the next write, from what the shard item holds', () => {
  const w = windowsAt(at('2031-05-06T12:34:20Z'));
  const T = w.minuteStart;

  it('opens a minute newer than the stored one, and counts in the newest open one (windows only move forward)', () => {
    expect(takeStep({}, plan, w, 1)).toEqual({ kind: 'open', want: 1 });
    expect(takeStep({ ms: T - 60, m: 5, d: 5 }, plan, w, 1)).toEqual({ kind: 'open', want: 1 });
    expect(takeStep({ ms: T, m: 4, d: 4 }, plan, w, 1)).toEqual({ kind: 'count', minuteStart: T, want: 1 });
    // Stamped in T, arriving after T+1 opened (latency, a clock behind): counts against T+1.
    expect(takeStep({ ms: T + 60, m: 1, d: 6 }, plan, w, 1)).toEqual({ kind: 'count', minuteStart: T + 60, want: 1 });
  });

  it('shrinks a lease to what is left, and says which window is full', () => {
    expect(takeStep({ ms: T, m: 2, d: 2 }, plan, w, 10)).toEqual({ kind: 'count', minuteStart: T, want: 3 });
    expect(takeStep({ ms: T, m: 1, d: 6 }, plan, w, 10)).toEqual({ kind: 'count', minuteStart: T, want: 2 });
    expect(takeStep({ ms: T, m: 5, d: 5 }, plan, w, 1)).toEqual({
      kind: 'full',
      reason: 'minute',
      minuteStart: T,
      minuteCount: 5,
      dayCount: 5,
    });
    expect(takeStep({ ms: T - 60, m: 2, d: 8 }, plan, w, 1)).toMatchObject({ kind: 'full', reason: 'day' });
  });

  it('answers a ban while it lasts', () => {
    expect(takeStep({ ms: T, m: 2, d: 2, banUntil: w.nowSec + 1 }, plan, w, 1)).toEqual({
      kind: 'banned',
      banUntil: w.nowSec + 1,
    });
    expect(takeStep({ ms: T, m: 2, d: 2, banUntil: w.nowSec }, plan, w, 1)).toMatchObject({ kind: 'count' });
  });
});

describe('leaseSize', () => {
  const w = windowsAt(at('2031-05-06T12:34:00Z'));
  const big = { perMinute: 600_000, perDay: 864_000_000 };
  const shard = { perMinute: 100_000, perDay: 144_000_000 };

  it('is 1 (exact counting) up to the exact limit, whatever the rate', () => {
    expect(leaseSize(PLANS.business.limits!, PLANS.business.limits!, 500, w)).toBe(1);
  });

  it("is about LIMITER.leaseSeconds of the container's own rate, capped, and never past the window's end", () => {
    expect(leaseSize(big, shard, 0, w)).toBe(1);
    expect(leaseSize(big, shard, 50, w)).toBe(50 * LIMITER.leaseSeconds);
    expect(leaseSize(big, shard, 1e6, w)).toBe(shard.perMinute / LIMITER.leasesPerShardWindow);
    expect(leaseSize(big, shard, 50, windowsAt(at('2031-05-06T12:34:59.500Z')))).toBe(25);
  });
});

describe('ban threshold and days', () => {
  it('is what a fleet of max(100, perMinute) workers honouring their 429s can cause in one window', () => {
    expect(banThreshold(PLANS.free.limits!)).toBe(100);
    expect(banThreshold(PLANS.pro.limits!)).toBe(300);
    expect(banThreshold(PLANS.business.limits!)).toBe(1_000);
    expect(banThreshold({ perMinute: 6_000, perDay: 1e6 })).toBe(6_000);
  });

  it('writes a ban that crosses midnight to the next day first and to the current day last', () => {
    const w = windowsAt(at('2031-05-06T23:55:00Z'));
    expect(banDays(w)).toEqual({
      banUntil: sec('2031-05-07T00:10:00Z'),
      days: [sec('2031-05-07T00:00:00Z'), sec('2031-05-06T00:00:00Z')],
    });
    expect(banDays(windowsAt(at('2031-05-06T12:00:00Z'))).days).toEqual([sec('2031-05-06T00:00:00Z')]);
  });

  it('bans a key twice as long for each repeat within its UTC day, up to the longest ban', () => {
    const w = windowsAt(at('2031-05-06T12:00:00Z'));
    const minutes = [1, 2, 3, 4, 5, 6, 40].map((nth) => (banDays(w, nth).banUntil - w.nowSec) / 60);
    expect(minutes).toEqual([15, 30, 60, 120, 240, 240, 240]);
    expect(banDays(w, 5).days).toEqual([sec('2031-05-06T00:00:00Z')]);
  });

  it('leaves an abuser that comes back after every ban 9 ban cycles a UTC day, not 90 (the 60 s authorizer cache each)', () => {
    const cycles = (banSeconds: (nth: number) => number) => {
      let n = 0;
      for (let t = 0; t + banSeconds(n + 1) + 60 <= 86_400; n++) t += banSeconds(n + 1) + 60;
      return n;
    };
    expect(cycles(() => BAN_POLICY.banSeconds)).toBe(90);
    expect(cycles(banSecondsFor)).toBe(9);
  });
});

const START = at('2031-05-06T10:00:00Z');
const plans = () =>
  (['free', 'pro', 'business'] as const).map((name) => ({ name, limits: PLANS[name].limits! as PlanLimits }));

describe('never over the limit', () => {
  it('admits exactly the limit out of 150 parallel requests on a fresh window, with exact Remaining', async () => {
    const limiter = createLimiter(new MemoryCounters());
    const limits = { perMinute: 100, perDay: 10_000 };
    const w = windowsAt(START);
    const out = await Promise.allSettled(Array.from({ length: 150 }, () => limiter.consume('k', limits, w)));
    const admitted = out.flatMap((r) => (r.status === 'fulfilled' && r.value.allowed ? [r.value] : []));
    expect(admitted).toHaveLength(100);
    expect(admitted.map((c) => c.minuteRemaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  it.each(plans())(
    '$name: many containers, clocks up to 1 s apart, three times the limit: every window admits exactly the limit',
    async ({ limits }) => {
      const r = await simulate(new MemoryCounters(), {
        limits,
        startMs: START,
        skewMs: LIMITER.maxSkewMs,
        traffic: steady((3 * limits.perMinute) / 60, 180),
        random: seeded(7),
      });
      expect(peakWindowShare(r, limits)).toBeLessThanOrEqual(1);
      // Every full window admitted its whole budget (under-admission only by what a reopened window took early).
      const shares = [...r.windows.values()].map((t) => t.admitted / limits.perMinute);
      expect(Math.min(...shares.slice(1, -1))).toBeGreaterThanOrEqual(0.98);
      expect(r.maxRemainingError).toBe(0);
    },
  );

  it('a lease key never admits more than its window, and under-admits by at most a lease per container', async () => {
    const limits = { perMinute: 100_000, perDay: 144_000_000 };
    const r = await simulate(new MemoryCounters(), {
      limits,
      startMs: START,
      skewMs: LIMITER.maxSkewMs,
      traffic: steady(2_500, 120),
    });
    expect(peakWindowShare(r, limits)).toBeLessThanOrEqual(1);
    expect(peakWindowShare(r, limits)).toBeGreaterThan(0.97);
  });
});

describe('overlapping requests in one container (the local server)', () => {
  it.each([
    ['an exact key', PLANS.free.limits!],
    ['a leased key', { perMinute: 100_000, perDay: 144_000_000 }],
  ])('%s: requests started a microtask apart never share a token', async (_name, limits) => {
    const counters = new MemoryCounters();
    const limiter = createLimiter(counters);
    const w = windowsAt(START);
    const pending = [];
    for (let i = 0; i < 300; i++) {
      pending.push(limiter.consume('k', limits, w));
      // A counter that answers without I/O resolves within a few microtasks: start the next one in between.
      for (let j = 0; j < i % 3; j++) await Promise.resolve();
    }
    const admitted = (await Promise.all(pending)).filter((c) => c.allowed).length;
    const counted = [...counters.items.values()].reduce((n, it) => n + (it.m ?? 0), 0);
    expect(admitted).toBeLessThanOrEqual(Math.min(counted, limits.perMinute));
    if (limits.perMinute <= 1_000) expect(admitted).toBe(limits.perMinute);
  });
});

describe('cost does not grow with the rate', () => {
  it('at 1,000 requests/s on a 100,000/min key, fewer than 0.1 limiter writes per admitted request', async () => {
    const counters = new MemoryCounters();
    const limits = { perMinute: 100_000, perDay: 144_000_000 };
    const r = await simulate(counters, { limits, startMs: START, traffic: steady(1_000, 60) });
    expect(r.admitted).toBe(60_000);
    expect(counters.writes / r.admitted).toBeLessThanOrEqual(0.1);
  });
});

describe('bans only for abuse', () => {
  it.each(plans())(
    '$name: a fleet of max(100, perMinute) workers, each honouring its own 429s, is never banned, whatever the spacing',
    async ({ limits }) => {
      const workers = Math.max(100, limits.perMinute);
      for (const seed of [1, 2, 3]) {
        const rnd = seeded(seed);
        const periods = Array.from({ length: workers }, () => 100 + Math.floor(rnd() * rnd() * 20_000));
        const phases = Array.from({ length: workers }, () => Math.floor(rnd() * 60_000));
        const extra = Array.from({ length: workers }, () => (rnd() < 0.5 ? 0 : Math.floor(rnd() * 5_000)));
        const r = await simulate(new MemoryCounters(), {
          limits,
          startMs: START + seed * 17_123,
          skewMs: LIMITER.maxSkewMs,
          random: rnd,
          traffic: fleet(
            workers,
            240,
            (i) => periods[i]!,
            (i) => phases[i]!,
            (i) => extra[i]!,
          ),
        });
        expect(r.byStatus.rate_limited).toBeGreaterThan(0);
        expect(r.byStatus.key_banned ?? 0).toBe(0);
        const { peak, threshold } = peakWindowRejections(r, limits);
        expect(peak).toBeLessThanOrEqual(threshold);
      }
    },
  );

  const abusers = [
    // At least 5 requests/s: Free's twice-the-limit is below that.
    { name: 'free', limits: PLANS.free.limits!, perSecond: 5 },
    // Above perMinute + banThreshold a minute: exactly twice the limit is also what a fleet of perMinute honouring
    // workers can send, so it cannot be told apart from one (docs/keys-and-limits.md).
    { name: 'pro', limits: PLANS.pro.limits!, perSecond: 11 },
    { name: 'business', limits: PLANS.business.limits!, perSecond: 35 },
  ];
  it.each(abusers)(
    '$name: a client ignoring Retry-After at $perSecond requests/s is banned within 2 minutes of its first 429',
    async ({ limits, perSecond }) => {
      const r = await simulate(new MemoryCounters(), {
        limits,
        startMs: START,
        skewMs: LIMITER.maxSkewMs,
        traffic: steady(perSecond, 300),
      });
      expect(r.firstBanMs).toBeDefined();
      expect(r.firstBanMs! - r.firstRejectionMs!).toBeLessThanOrEqual(120_000);
    },
  );

  it('a key whose day is spent and keeps sending is banned by the same rule, and other keys are untouched', async () => {
    const limits = PLANS.free.limits!;
    const counters = new MemoryCounters();
    const limiter = createLimiter(counters);
    const noon = at('2031-05-07T12:00:00Z');
    for (let i = 0; i < 1_000; i++) await limiter.consume('spent', limits, windowsAt(noon - 3_600_000 + i * 1_100));
    // Then 5 requests/s, ignoring Retry-After: every answer is a 429 (quota_exceeded until the ban).
    let bannedAt: number | undefined;
    for (let t = noon; t < noon + 180_000 && bannedAt === undefined; t += 200) {
      const c = await limiter.consume('spent', limits, windowsAt(t));
      expect(c.allowed).toBe(false);
      if (!c.allowed && c.reason === 'banned') bannedAt = t;
    }
    expect(bannedAt).toBeDefined();
    expect(bannedAt! - noon).toBeLessThanOrEqual(120_000);
    expect(await limiter.consume('other', limits, windowsAt(bannedAt!))).toMatchObject({ allowed: true });
  });

  it('a spent day quota polled inside the minute limit is quota_exceeded with Retry-After to midnight, never a ban', async () => {
    const limits = PLANS.free.limits!;
    const counters = new MemoryCounters();
    const limiter = createLimiter(counters);
    const midnight = at('2031-05-07T00:00:00Z');
    // The day's 1,000 requests, spent by 23:00.
    const spend = midnight - 3_600_000 - 20 * 60_000;
    for (let i = 0; i < 1_000; i++) await limiter.consume('k', limits, windowsAt(spend + i * 1_100));
    const answers = [];
    for (let t = midnight - 3_600_000; t < midnight + 30_000; t += 1_500) {
      const w = windowsAt(t);
      const c = await limiter.consume('k', limits, w);
      answers.push({ t, c, w });
    }
    const before = answers.filter((a) => a.t < midnight);
    expect(before.every((a) => !a.c.allowed && a.c.reason === 'day' && a.c.reset === midnight / 1000)).toBe(true);
    expect(answers.some((a) => !a.c.allowed && a.c.reason === 'banned')).toBe(false);
    expect(answers.filter((a) => a.t >= midnight).every((a) => a.c.allowed)).toBe(true);
  });
});

describe('what a container knows, it answers without I/O', () => {
  it('a full window, then a ban, are answered locally', async () => {
    const counters = new MemoryCounters();
    const limiter = createLimiter(counters);
    const limits = { perMinute: 2, perDay: 100 };
    const w = windowsAt(START + 5_000);
    await limiter.consume('k', limits, w);
    await limiter.consume('k', limits, w);
    expect(limiter.refusesLocally('k', limits, w)).toBe(false);
    expect(await limiter.consume('k', limits, w)).toMatchObject({ allowed: false, reason: 'minute' });
    expect(limiter.refusesLocally('k', limits, w)).toBe(true);
    const writes = counters.writes;
    for (let i = 0; i < 50; i++) await limiter.consume('k', limits, w);
    // No counting write; the 429s are recorded once (rejectionFlushMs has not passed on this clock).
    expect(counters.writes - writes).toBe(0);
    expect(BAN_POLICY.banSeconds).toBeGreaterThan(0);
  });
});
