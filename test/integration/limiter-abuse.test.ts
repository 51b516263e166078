/**
 * The limiter's real adapter on DynamoDB Local, through the fault proxy (which passes everything through unless a
 * test adds a rule): late requests, lost answers, clocks apart, contention, oversized items and failing ban writes.
 * Windows are set by each request's own time, so every test picks its instants explicitly; each limiter instance
 * is one container.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { BAN_POLICY, banThreshold } from '../../contract/plans.ts';
import { quietTelemetry, startTestApi, type TestApi } from '../helpers/api.ts';
import { windowsAt, type LimitCounters } from '../../lambdas/domain/rate-limit.ts';
import { createLimiter, type Limiter } from '../../lambdas/domain/limiter.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let proxy: FaultProxy;
let api: TestApi;
let counters: LimitCounters;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  api = await startTestApi({ dynamoEndpoint: proxy.url });
  // Through the fault proxy, as the functions' own clients are.
  counters = createLimitStore(api.storage, quietTelemetry());
});
afterAll(async () => {
  await api?.close();
  await proxy?.close();
});
afterEach(() => proxy.clear());

const container = (): Limiter => createLimiter(counters);
const subject = () => `s-${randomUUID()}`;
const MIN = 60_000;
/** A minute start far from other tests' (each test also uses its own subject). */
let base = Date.UTC(2032, 0, 1, 9, 0, 0);
const freshMinute = () => (base += 7 * 86_400_000);

async function run(limiter: Limiter, s: string, plan: { perMinute: number; perDay: number }, atMs: number, n = 1) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await limiter.consume(s, plan, windowsAt(atMs)));
  return out;
}
const allowed = (cs: Array<{ allowed: boolean }>) => cs.filter((c) => c.allowed).length;

describe('windows only move forward', () => {
  const plan = { perMinute: 5, perDay: 1_000 };

  it('a request stamped in minute T that arrives after T+1 opened counts against T+1, never resets it', async () => {
    const s = subject();
    const t = freshMinute();
    const a = container();
    expect(allowed(await run(a, s, plan, t, 6))).toBe(5); // T is full
    expect(allowed(await run(a, s, plan, t + MIN))).toBe(1); // T+1 opens
    // Another container, its clock still in T (not in T's last second).
    const late = await run(container(), s, plan, t + 50_000);
    const more = await run(a, s, plan, t + MIN + 1_000, 6);
    // T+1 admits exactly its limit, the late request included; T's full window was not reopened.
    expect(1 + allowed(late) + allowed(more)).toBe(5);
    expect((await counters.usage(s, plan, windowsAt(t + MIN + 2_000))).minuteCount).toBe(5);
  });

  it('rolls over at midnight: a late request from the old day counts in the old day, the new day stays exact', async () => {
    const s = subject();
    const midnight = freshMinute() - 9 * 3_600_000 + 86_400_000; // base minutes are at 09:00 UTC
    await run(container(), s, plan, midnight - 30_000, 5); // 23:59:30, full
    expect(allowed(await run(container(), s, plan, midnight))).toBe(1);
    expect(await container().consume(s, plan, windowsAt(midnight - 20_000))).toMatchObject({
      allowed: false,
      reason: 'minute',
    });
    expect(await counters.usage(s, plan, windowsAt(midnight + 1_000))).toMatchObject({ minuteCount: 1, dayCount: 1 });
  });
});

describe('lost answers and clocks apart never count a request twice, nor admit one uncounted', () => {
  const plan = { perMinute: 5, perDay: 1_000 };

  it('a counting write whose answer is lost is a 503, counted once, and never resent', async () => {
    const s = subject();
    const t = freshMinute();
    expect(await container().consume(s, plan, windowsAt(t))).toMatchObject({ minuteRemaining: 4 });
    const writes = () => proxy.log.filter((r) => r.target === 'UpdateItem' && r.body.includes(`rl#${s}#`)).length;
    const before = writes();
    // The next write (a count in the open minute) is applied, and its answer lost.
    proxy.add({ target: 'UpdateItem', body: `rl#${s}#`, times: 1, fault: { kind: 'lose-answer', holdMs: 600 } });
    await expect(container().consume(s, plan, windowsAt(t + 10))).rejects.toBeInstanceOf(UnavailableError);
    expect(writes() - before).toBe(1); // sent once: no resend that could count it again
    // The lost one stands (the service errs towards under-admission), and is counted once.
    const next = await container().consume(s, plan, windowsAt(t + 1_000));
    expect(next).toMatchObject({ allowed: true, minuteRemaining: 2 });
    expect((await counters.usage(s, plan, windowsAt(t + 1_000))).minuteCount).toBe(3);
  });

  it('two containers 12 ms apart across a second boundary, one answer lost: 3 requests count 3', async () => {
    const s = subject();
    const t = freshMinute() + 10_995;
    const a = container();
    const b = container();
    await a.consume(s, plan, windowsAt(t));
    proxy.add({ target: 'UpdateItem', body: `rl#${s}#`, times: 1, fault: { kind: 'lose-answer', holdMs: 600 } });
    await expect(b.consume(s, plan, windowsAt(t + 12))).rejects.toBeInstanceOf(UnavailableError);
    await a.consume(s, plan, windowsAt(t + 1));
    expect((await counters.usage(s, plan, windowsAt(t + 20))).minuteCount).toBe(3);
  });

  it('a throttled counting write (not applied) is tried again and counted once', async () => {
    const s = subject();
    const t = freshMinute();
    proxy.add({
      target: 'UpdateItem',
      body: `rl#${s}#`,
      times: 1,
      fault: { kind: 'error', status: 400, type: 'ThrottlingException' },
    });
    expect(await container().consume(s, plan, windowsAt(t))).toMatchObject({ allowed: true, minuteRemaining: 4 });
    expect((await counters.usage(s, plan, windowsAt(t))).minuteCount).toBe(1);
  });
});

describe('never a 500 from the limiter', () => {
  it('a window that keeps moving under a request answers 503 (UnavailableError)', async () => {
    const s = subject();
    const w = windowsAt(freshMinute());
    // Every write on this subject's item fails its condition, and the item returned always shows room: the limiter
    // can never settle (what extreme contention looks like from one request).
    proxy.add({
      target: 'UpdateItem',
      body: s,
      fault: {
        kind: 'error',
        status: 400,
        type: 'ConditionalCheckFailedException',
        fields: {
          Item: { pk: { S: `rl#${s}#${w.dayStart}` }, ms: { N: String(w.minuteStart) }, m: { N: '0' }, d: { N: '0' } },
        },
      },
    });
    await expect(container().consume(s, { perMinute: 5, perDay: 100 }, w)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('an item-size ValidationException (an item over 400 KB) is a 503, not a 500', async () => {
    const s = subject();
    proxy.add({
      target: 'UpdateItem',
      body: `rl#${s}#`,
      fault: {
        kind: 'error',
        status: 400,
        type: 'ValidationException',
        message: 'Item size to update has exceeded the maximum allowed size',
      },
    });
    await expect(container().consume(s, { perMinute: 5, perDay: 100 }, windowsAt(freshMinute()))).rejects.toSatisfy(
      (e) => e instanceof UnavailableError && e.status === 503,
    );
  });
});

describe('ban bookkeeping', () => {
  const tight = { perMinute: 2, perDay: 1_000 };

  it('429s from many containers add up on one small item: a window over the threshold bans the key', async () => {
    const s = subject();
    const t = freshMinute();
    await run(container(), s, tight, t, 2);
    // Each 429 from a container of its own (each records at once): banThreshold + 1 of them in the window.
    for (let i = 0; i <= banThreshold(tight); i++) await container().consume(s, tight, windowsAt(t + 100 + i));
    expect(await container().consume(s, tight, windowsAt(t + 3 * MIN))).toMatchObject({
      allowed: false,
      reason: 'banned',
    });
  });

  it('a key banned again the same UTC day is banned twice as long; many containers deciding one ban count it once', async () => {
    const s = subject();
    const t = freshMinute();
    /** Floods minute `at` from a container per 429 until banned; answers how long the ban lasts from `at`. */
    const floodUntilBanned = async (at: number) => {
      await run(container(), s, tight, at, 2);
      // More containers than the threshold needs: those after the first to cross it decide the same window's ban.
      for (let i = 0; i <= banThreshold(tight) + 5; i++) await container().consume(s, tight, windowsAt(at + 100 + i));
      const c = await container().consume(s, tight, windowsAt(at + 1_000));
      expect(c).toMatchObject({ allowed: false, reason: 'banned' });
      return (c as { banUntil: number }).banUntil - Math.floor(at / 1000);
    };
    const first = await floodUntilBanned(t);
    expect(Math.round(first / 60)).toBe(BAN_POLICY.banSeconds / 60);
    const second = await floodUntilBanned(t + (first + 60) * 1000);
    expect(Math.round(second / 60)).toBe((2 * BAN_POLICY.banSeconds) / 60);
    const third = await floodUntilBanned(t + (first + second + 120) * 1000);
    expect(Math.round(third / 60)).toBe((4 * BAN_POLICY.banSeconds) / 60);
    // A new UTC day starts again at the first ban's length.
    const nextDay = Math.ceil((t + 1) / 86_400_000) * 86_400_000 + 3_600_000;
    expect(Math.round((await floodUntilBanned(nextDay)) / 60)).toBe(BAN_POLICY.banSeconds / 60);
  });

  it('a failing ban write still answers 429, never 503', async () => {
    const s = subject();
    const t = freshMinute();
    proxy.add({
      target: 'UpdateItem',
      body: 'banUntil = :b',
      fault: { kind: 'error', status: 500, type: 'InternalServerError' },
    });
    await run(container(), s, tight, t, 2);
    const late = [];
    for (let i = 0; i <= banThreshold(tight) + 2; i++) late.push(await container().consume(s, tight, windowsAt(t + i)));
    expect(late.every((c) => !c.allowed && c.reason === 'minute')).toBe(true);
    expect(proxy.log.filter((r) => r.fault === 'error' && r.body.includes(s)).length).toBeGreaterThan(0);
  });

  it('a ban across midnight survives a failure between the two day items', async () => {
    const s = subject();
    const midnight = freshMinute() - 9 * 3_600_000 + 86_400_000;
    const t = midnight - 5 * MIN; // 23:55: a 15-minute ban reaches into the next day
    // The first ban write, on the next day's item, fails; the next 429 over the threshold bans again.
    proxy.add({
      target: 'UpdateItem',
      body: `rl#${s}#${midnight / 1000}"`,
      times: 1,
      fault: { kind: 'error', status: 500, type: 'InternalServerError' },
    });
    await run(container(), s, tight, t, 2);
    const late = [];
    for (let i = 0; i <= banThreshold(tight) + 1; i++) late.push(await container().consume(s, tight, windowsAt(t + i)));
    expect(late.every((c) => !c.allowed)).toBe(true);
    expect(proxy.log.filter((r) => r.fault === 'error' && r.body.includes(s)).length).toBeGreaterThan(0);
    // A later ban attempt wrote both days (a failure part-way never leaves a ban that ends at midnight).
    expect(await container().consume(s, tight, windowsAt(t + 3 * MIN))).toMatchObject({
      allowed: false,
      reason: 'banned',
    });
    expect(await container().consume(s, tight, windowsAt(midnight + 5 * MIN))).toMatchObject({
      allowed: false,
      reason: 'banned',
    });
  });
});
