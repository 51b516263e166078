/** The limiter's window arithmetic and ban rules on an injected clock (pure domain code; storage does the writes). */
import { describe, expect, it } from 'vitest';
import { BAN_POLICY, banThreshold, PLANS } from '../../contract/plans.ts';
import { banDays, limiterStep, rejectionStep, shouldBan, windowsAt } from '../../lambdas/domain/rate-limit.ts';

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

describe('limiterStep', () => {
  const w = windowsAt(at('2031-05-06T12:34:20Z'));
  const T = w.minuteStart;

  it('opens the minute on a fresh day and when the stored minute is older', () => {
    expect(limiterStep({}, plan, w)).toEqual({ kind: 'open' });
    expect(limiterStep({ ms: T - 60, m: 5, d: 5 }, plan, w)).toEqual({ kind: 'open' });
  });

  it('counts in the open minute while it has room, rejects when full', () => {
    expect(limiterStep({ ms: T, m: 4, d: 4 }, plan, w)).toEqual({ kind: 'count', minuteStart: T });
    expect(limiterStep({ ms: T, m: 5, d: 5 }, plan, w)).toEqual({
      allowed: false,
      reason: 'minute',
      minuteCount: 5,
      dayCount: 5,
    });
  });

  it('counts a late request (stamped in T, the store already in T+1) against T+1, never reopening T', () => {
    expect(limiterStep({ ms: T + 60, m: 1, d: 6 }, plan, w)).toEqual({ kind: 'count', minuteStart: T + 60 });
    expect(limiterStep({ ms: T + 60, m: 5, d: 7 }, plan, w)).toMatchObject({ allowed: false, reason: 'minute' });
  });

  it('rejects on the day quota before anything else but a ban, and reports the minute only if current', () => {
    expect(limiterStep({ ms: T - 60, m: 2, d: 8 }, plan, w)).toEqual({
      allowed: false,
      reason: 'day',
      minuteCount: 0,
      dayCount: 8,
    });
    expect(limiterStep({ ms: T, m: 2, d: 8 }, plan, w)).toEqual({
      allowed: false,
      reason: 'day',
      minuteCount: 2,
      dayCount: 8,
    });
    expect(limiterStep({ ms: T, m: 2, d: 2, banUntil: w.nowSec + 1 }, plan, w)).toEqual({
      allowed: false,
      reason: 'banned',
      banUntil: w.nowSec + 1,
    });
    expect(limiterStep({ ms: T, m: 2, d: 2, banUntil: w.nowSec }, plan, w)).toEqual({ kind: 'count', minuteStart: T });
  });
});

describe("rejectionStep: only rejections past the grace after the window's first 429 count", () => {
  const w = windowsAt(at('2031-05-06T12:34:20Z'));
  const T = w.minuteStart;

  it('opens the rejection window on the first 429 of a minute (or after an older one)', () => {
    expect(rejectionStep({}, w)).toEqual({ kind: 'open' });
    expect(rejectionStep({ rjm: T - 60, rf: w.nowMs - 30_000, rj: 50 }, w)).toEqual({ kind: 'open' });
  });

  it('ignores rejections within the grace (a burst already in flight) and counts later ones', () => {
    expect(rejectionStep({ rjm: T, rf: w.nowMs - BAN_POLICY.graceMs, rj: 0 }, w)).toEqual({ kind: 'none' });
    expect(rejectionStep({ rjm: T, rf: w.nowMs - BAN_POLICY.graceMs - 1, rj: 0 }, w)).toEqual({
      kind: 'late',
      minuteStart: T,
    });
  });

  it('adds a late request to the newest rejection window, never moving it back', () => {
    expect(rejectionStep({ rjm: T + 60, rf: w.nowMs - 5_000, rj: 3 }, w)).toEqual({
      kind: 'late',
      minuteStart: T + 60,
    });
  });
});

describe('ban threshold and days', () => {
  it('scales with the plan: 10 % of the minute limit, at least 30', () => {
    expect(banThreshold(PLANS.free.limits!)).toBe(30);
    expect(banThreshold(PLANS.pro.limits!)).toBe(30);
    expect(banThreshold(PLANS.business.limits!)).toBe(100);
    expect(banThreshold({ perMinute: 6_000, perDay: 1e6 })).toBe(600);
  });

  it('bans at or over the threshold (a count that stepped over it still bans)', () => {
    const limits = PLANS.business.limits!;
    expect(shouldBan(99, limits)).toBe(false);
    expect(shouldBan(100, limits)).toBe(true);
    expect(shouldBan(131, limits)).toBe(true);
  });

  it('writes a ban that crosses midnight to the next day first and to the current day last', () => {
    const w = windowsAt(at('2031-05-06T23:55:00Z'));
    expect(banDays(w)).toEqual({
      banUntil: sec('2031-05-07T00:10:00Z'),
      days: [sec('2031-05-07T00:00:00Z'), sec('2031-05-06T00:00:00Z')],
    });
    expect(banDays(windowsAt(at('2031-05-06T12:00:00Z'))).days).toEqual([sec('2031-05-06T00:00:00Z')]);
  });
});
