/**
 * The limiter against late requests, bursts, hammering and failing ban writes, on DynamoDB Local (through the fault
 * proxy, which passes everything through unless a test adds a rule). Windows are set by the request's own time,
 * so every test picks its instants explicitly.
 */
import { randomUUID } from 'node:crypto';
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { BAN_POLICY, banThreshold, PLANS, type PlanLimits } from '../../contract/plans.ts';
import { quietTelemetry, startTestApi, type TestApi } from '../helpers/api.ts';
import { windowsAt, type LimitStore } from '../../lambdas/domain/rate-limit.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import { localClient } from '../../lambdas/storage/provision.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let proxy: FaultProxy;
let api: TestApi;
let client: DynamoDBClient;
let limits: LimitStore;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  api = await startTestApi({ dynamoEndpoint: proxy.url });
  // Through the fault proxy, as the functions' own clients are.
  limits = createLimitStore(api.storage, quietTelemetry());
  client = localClient(inject('dynamoEndpoint'));
});
afterAll(async () => {
  client?.destroy();
  await api?.close();
  await proxy?.close();
});
afterEach(() => proxy.clear());

const subject = () => `s-${randomUUID()}`;
const MIN = 60_000;
/** A minute start far from other tests' (each test also uses its own subject). */
let base = Date.UTC(2032, 0, 1, 9, 0, 0);
const freshMinute = () => (base += 7 * 86_400_000);

async function run(s: string, plan: PlanLimits, atMs: number, n = 1) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await limits.consume(s, plan, windowsAt(atMs)));
  return out;
}
const allowed = (cs: Array<{ allowed: boolean }>) => cs.filter((c) => c.allowed).length;

describe('windows only move forward', () => {
  const plan = { perMinute: 5, perDay: 1_000 };

  it('a request stamped in minute T that arrives after T+1 opened counts against T+1, never resets it', async () => {
    const s = subject();
    const t = freshMinute();
    expect(allowed(await run(s, plan, t, 6))).toBe(5); // T is full
    expect(allowed(await run(s, plan, t + MIN))).toBe(1); // T+1 opens
    const late = await run(s, plan, t + 59_000); // stamped in T, arrives now
    const more = await run(s, plan, t + MIN + 1_000, 6);
    // T+1 admits exactly its limit, the late request included; T's full window was not reopened.
    expect(1 + allowed(late) + allowed(more)).toBe(5);
    expect((await limits.usage(s, windowsAt(t + MIN + 2_000))).minuteCount).toBe(5);
  });

  it('a late request finding the newest minute full is rejected and leaves its count alone', async () => {
    const s = subject();
    const t = freshMinute();
    await run(s, plan, t + MIN, 5);
    expect(await limits.consume(s, plan, windowsAt(t + 30_000))).toMatchObject({ allowed: false, reason: 'minute' });
    expect((await limits.usage(s, windowsAt(t + MIN))).minuteCount).toBe(5);
    expect(allowed(await run(s, plan, t + MIN + 1, 3))).toBe(0);
  });

  it('rolls over at midnight: a late request from the old day counts in the old day, the new day stays exact', async () => {
    const s = subject();
    const midnight = freshMinute() - 9 * 3_600_000 + 86_400_000; // base minutes are at 09:00 UTC
    await run(s, plan, midnight - 1_000, 5); // 23:59:59, full
    expect(allowed(await run(s, plan, midnight))).toBe(1);
    expect(await limits.consume(s, plan, windowsAt(midnight - 500))).toMatchObject({
      allowed: false,
      reason: 'minute',
    });
    expect(await limits.usage(s, windowsAt(midnight + 1_000))).toMatchObject({ minuteCount: 1, dayCount: 1 });
  });
});

describe('contention', () => {
  it('a window that keeps moving under a request answers 503 (UnavailableError), never a 500', async () => {
    const { UnavailableError } = await import('../../lambdas/domain/errors.ts');
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
    await expect(limits.consume(s, { perMinute: 5, perDay: 100 }, w)).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('bans follow requests that keep coming after a 429, not a parallel burst', () => {
  it('a burst of 130 in parallel against 100/min gets 30 rejections and no ban', async () => {
    const s = subject();
    const plan = { perMinute: 100, perDay: 10_000 };
    const t = freshMinute();
    const burst = await Promise.all(Array.from({ length: 130 }, () => limits.consume(s, plan, windowsAt(t + 100))));
    expect(allowed(burst)).toBe(100);
    expect(burst.filter((c) => !c.allowed).every((c) => c.reason === 'minute')).toBe(true);
    expect(await limits.consume(s, plan, windowsAt(t + MIN))).toMatchObject({ allowed: true });
  });

  it('hammering past the grace after the first 429 bans the key, from the threshold on', async () => {
    const s = subject();
    const plan = { perMinute: 100, perDay: 10_000 };
    const t = freshMinute();
    await Promise.all(Array.from({ length: 101 }, () => limits.consume(s, plan, windowsAt(t)))); // limit reached, first 429
    const after = t + BAN_POLICY.graceMs + 500;
    const hammer = await run(s, plan, after, banThreshold(plan) - 1);
    expect(hammer.every((c) => !c.allowed && c.reason === 'minute')).toBe(true);
    expect(await limits.consume(s, plan, windowsAt(t + MIN))).toMatchObject({ allowed: true }); // one short: no ban
    await run(s, plan, t + MIN, 100);
    await run(s, plan, t + MIN + 10, 1);
    await run(s, plan, t + MIN + 2_000, banThreshold(plan));
    const banned = await limits.consume(s, plan, windowsAt(t + 2 * MIN));
    expect(banned).toMatchObject({
      allowed: false,
      reason: 'banned',
      banUntil: Math.floor((t + MIN + 2_000) / 1000) + BAN_POLICY.banSeconds,
    });
  });

  it('a Business client overshooting by 3 % over the minute is not banned', async () => {
    const s = subject();
    const plan = PLANS.business.limits!;
    const t = freshMinute();
    // 1,030 requests spread over the minute, 103 every 5 s.
    const all = [];
    for (let slice = 0; slice < 10; slice++) {
      all.push(
        ...(await Promise.all(
          Array.from({ length: 103 }, () => limits.consume(s, plan, windowsAt(t + slice * 5_000))),
        )),
      );
    }
    expect(allowed(all)).toBe(1_000);
    expect(await limits.consume(s, plan, windowsAt(t + MIN))).toMatchObject({ allowed: true });
  });
});

describe('ban bookkeeping', () => {
  const tight = { perMinute: 2, perDay: 1_000 };

  it('bans a count that stepped over the threshold (e.g. a retried ADD), not only one equal to it', async () => {
    const s = subject();
    const t = freshMinute();
    const w = windowsAt(t + 5_000);
    await client.send(
      new UpdateItemCommand({
        TableName: api.tableEnv.STATE_TABLE_NAME,
        Key: { pk: { S: `rl#${s}#${w.dayStart}` } },
        UpdateExpression: 'SET ms = :ms, m = :m, d = :m, rjm = :ms, rf = :rf, rj = :rj',
        ExpressionAttributeValues: {
          ':ms': { N: String(w.minuteStart) },
          ':m': { N: '2' },
          ':rf': { N: String(t) },
          ':rj': { N: String(banThreshold(tight) + 3) },
        },
      }),
    );
    await limits.consume(s, tight, w);
    expect(await limits.consume(s, tight, windowsAt(t + MIN))).toMatchObject({ allowed: false, reason: 'banned' });
  });

  it('a failing ban write still answers 429, never 503', async () => {
    const s = subject();
    const t = freshMinute();
    proxy.add({
      target: 'UpdateItem',
      body: 'banUntil = :b',
      fault: { kind: 'error', status: 500, type: 'InternalServerError' },
    });
    await run(s, tight, t, 3);
    const late = await run(s, tight, t + 2_000, banThreshold(tight) + 2);
    expect(late.every((c) => !c.allowed && c.reason === 'minute')).toBe(true);
    expect(proxy.log.filter((r) => r.fault === 'error' && r.body.includes(s)).length).toBeGreaterThan(0);
  });

  it('a ban across midnight survives a failure between the two day items', async () => {
    const s = subject();
    const midnight = freshMinute() - 9 * 3_600_000 + 86_400_000;
    const t = midnight - 5 * MIN; // 23:55: a 15-minute ban reaches into the next day
    // One ban call fails on the next day's item (the SDK's three attempts of it).
    proxy.add({
      target: 'UpdateItem',
      body: `rl#${s}#${midnight / 1000}"`,
      times: 3,
      fault: { kind: 'error', status: 500, type: 'InternalServerError' },
    });
    await run(s, tight, t, 3);
    const late = await run(s, tight, t + 2_000, banThreshold(tight) + 1);
    expect(late.every((c) => !c.allowed)).toBe(true);
    expect(proxy.log.filter((r) => r.fault === 'error' && r.body.includes(s))).toHaveLength(3);
    expect(await limits.consume(s, tight, windowsAt(t + 3 * MIN))).toMatchObject({ allowed: false, reason: 'banned' });
    expect(await limits.consume(s, tight, windowsAt(midnight + 5 * MIN))).toMatchObject({
      allowed: false,
      reason: 'banned',
    });
  });
});
