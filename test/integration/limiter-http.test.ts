/**
 * The limiter as clients see it, over HTTP through the local gateway (`npm start`'s) on DynamoDB Local: a parallel
 * burst on a fresh window, a fleet of workers that honour their 429s, a client that ignores them, a spent day quota
 * polled, an oversized item, and reads that do not wait for the limiter. Time is the test's clock: each scenario
 * runs on its own synthetic schedule, request by request, so nothing depends on this machine's speed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { BAN_POLICY, banThreshold, PLANS } from '../../contract/plans.ts';
import { fleet, steady, type SimAnswer, type Traffic } from '../../bench/lib/traffic.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient } from '../helpers/clients.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

let day = Date.UTC(2033, 0, 3);
/** 10:00 UTC on a day no other test of this file uses. */
const freshDay = () => (day += 86_400_000) + 10 * 3_600_000;

async function answerOf(res: Response): Promise<SimAnswer & { remainingHeader: string | null }> {
  const body = (await res.json()) as { code?: string };
  return {
    status: res.status as SimAnswer['status'],
    code: res.status === 200 ? undefined : body.code,
    retryAfter: Number(res.headers.get('retry-after') ?? 0),
    remaining: Number(res.headers.get('x-ratelimit-remaining')),
    reset: Number(res.headers.get('x-ratelimit-reset')),
    remainingHeader: res.headers.get('x-ratelimit-remaining'),
  };
}

/** Drives `traffic` over HTTP on the test clock, from `startMs`: one request at a time, in time order. */
async function drive(traffic: Traffic, startMs: number, key: string) {
  const seen: Array<{ atMs: number; answer: SimAnswer }> = [];
  for (let req = traffic.next(); req; req = traffic.next()) {
    api.clock.set(() => startMs + req!.atMs);
    const answer = await answerOf(await api.call('/pets?limit=1', { key }));
    seen.push({ atMs: req.atMs, answer });
    traffic.answered?.(req, answer);
  }
  const count = (code: string) => seen.filter((s) => (s.answer.code ?? String(s.answer.status)) === code).length;
  return { seen, count };
}

describe('exact for the standard plans', () => {
  it('150 parallel requests on a fresh window: exactly 60 admitted on a Free key, each with its own Remaining', async () => {
    const now = freshDay();
    api.clock.set(() => now);
    const answers = await Promise.all(
      Array.from({ length: 150 }, async () => answerOf(await api.call('/pets?limit=1'))),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(60);
    expect(answers.filter((a) => a.status === 429 && a.code === 'rate_limited')).toHaveLength(90);
    expect(ok.map((a) => a.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });
});

describe('bans only for abuse', () => {
  it('80 workers on a Free key, one request every 2 s each, waiting Retry-After after their own 429: never banned', async () => {
    const start = freshDay();
    const { count } = await drive(
      fleet(
        80,
        150,
        () => 2_000,
        (i) => i * 25,
      ),
      start,
      api.keys.free,
    );
    expect(count('200')).toBeGreaterThan(0);
    expect(count('rate_limited')).toBeGreaterThan(0);
    expect(count('key_banned')).toBe(0);
  });

  it('100 workers at uneven spacings, some waiting longer than told: never banned', async () => {
    const start = freshDay();
    const { count } = await drive(
      fleet(
        BAN_POLICY.fleetWorkers,
        150,
        (i) => 300 + ((i * 7919) % 9_000),
        (i) => (i * 6007) % 60_000,
        (i) => (i % 3 === 0 ? (i * 131) % 4_000 : 0),
      ),
      start,
      api.keys.free,
    );
    expect(count('rate_limited')).toBeGreaterThan(0);
    expect(count('key_banned')).toBe(0);
  });

  it('a client ignoring Retry-After at 5 requests/s on a Free key is banned within 2 minutes of its first 429', async () => {
    const start = freshDay();
    const { seen } = await drive(steady(5, 150), start, api.keys.free);
    const first429 = seen.find((s) => s.answer.status === 429)!;
    const firstBan = seen.find((s) => s.answer.code === 'key_banned');
    expect(firstBan).toBeDefined();
    expect(firstBan!.atMs - first429.atMs).toBeLessThanOrEqual(120_000);
    // Rejections before the ban exceeded what the largest protected fleet could cause.
    const before = seen.filter((s) => s.atMs < firstBan!.atMs && s.answer.code === 'rate_limited').length;
    // Its 429s before the ban, the one answered key_banned included, exceeded what the largest protected fleet causes.
    expect(before + 1).toBeGreaterThan(banThreshold(PLANS.free.limits!));
    // Banned, it stops at the gateway: the authorizer denies the key (ACCESS_DENIED, answered 429 key_banned: no
    // function ran, nothing was counted).
    const askedMs = start + seen.at(-1)!.atMs + 1_000;
    api.clock.set(() => askedMs);
    const res = await api.call('/pets?limit=1');
    expect(res.status).toBe(429);
    expect(((await res.json()) as { code: string }).code).toBe('key_banned');
    // The ban's end, as the function gave it, and the rest of it from the authorizer's Deny (this file's authorizer
    // cache is off, so nothing replays the Deny: the rest is exact).
    const banEnd = Number(firstBan!.answer.reset);
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(banEnd);
    expect(Number(res.headers.get('retry-after'))).toBe(banEnd - Math.floor(askedMs / 1000));
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(BAN_POLICY.banSeconds);
    // The key's minute limit, as the function's key_banned gives it.
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(PLANS.free.limits!.perMinute));
  });

  it('a spent day quota polled every 1.5 s is quota_exceeded with Retry-After to midnight, never a ban', async () => {
    const midnight = freshDay() + 14 * 3_600_000;
    const spendFrom = midnight - 40 * 60_000;
    // The Free key's 1,000 requests of the day, 60 a minute.
    for (let i = 0; i < 1_000; i++) {
      api.clock.set(() => spendFrom + Math.floor(i / 60) * 60_000 + (i % 60) * 10);
      expect((await api.call('/pets?limit=1')).status).toBe(200);
    }
    const polls = [];
    for (let t = midnight - 120_000; t < midnight + 3_000; t += 1_500) {
      api.clock.set(() => t);
      polls.push({ t, answer: await answerOf(await api.call('/pets?limit=1')) });
    }
    const before = polls.filter((p) => p.t < midnight);
    expect(before.every((p) => p.answer.code === 'quota_exceeded')).toBe(true);
    expect(before.every((p) => p.answer.retryAfter === midnight / 1000 - Math.floor(p.t / 1000))).toBe(true);
    expect(polls.some((p) => p.answer.code === 'key_banned')).toBe(false);
    expect(polls.filter((p) => p.t >= midnight).every((p) => p.answer.status === 200)).toBe(true);
  });
});

describe('reads do not wait for the limiter', () => {
  /**
   * Holds the limiter's counting write until the operation's own first DynamoDB request starts (or, where it never
   * does, 1.5 s pass: a fallback, not a measure); records the order of events.
   */
  function holdLimiterUntilPetsRequest() {
    const events: string[] = [];
    let petsStarted: () => void = () => undefined;
    const started = new Promise<void>((r) => (petsStarted = r));
    const remove = onEveryClient(api, 'holdLimiter', (next, context) => async (args) => {
      const input = args.input as { TableName?: string; Key?: { pk?: string | { S?: string } } };
      const pk = input.Key?.pk;
      const state = input.TableName === api.tableEnv.STATE_TABLE_NAME;
      const limiterItem = /^rl[rh]?#/.test((typeof pk === 'string' ? pk : pk?.S) ?? '');
      // The limiter's counting write (the authorizer's ban check reads the same item: not held).
      const isLimiter = state && limiterItem && context.commandName === 'UpdateItemCommand';
      const isOperation =
        input.TableName === api.tableEnv.PETS_TABLE_NAME ||
        (state && !limiterItem) ||
        context.commandName === 'TransactWriteItemsCommand';
      if (isOperation) {
        events.push(`pets ${context.commandName}`);
        petsStarted();
      }
      if (isLimiter) {
        const released = await Promise.race([started.then(() => 'by pets'), sleep(1_500).then(() => 'by timeout')]);
        events.push(`limiter released ${released}`);
      }
      const out = await next(args);
      if (isLimiter) events.push('limiter done');
      return out;
    });
    return { events, remove };
  }

  it('GET /pets starts its read beside the limiter write; the answer still carries the counted headers', async () => {
    api.clock.set(() => freshDay());
    const { events, remove } = holdLimiterUntilPetsRequest();
    try {
      const res = await api.call('/pets?limit=1');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
    } finally {
      remove();
    }
    expect(events[0]).toMatch(/^pets /);
    expect(events).toContain('limiter released by pets');
  });

  it('POST /pets counts before it writes', async () => {
    api.clock.set(() => freshDay());
    const { events, remove } = holdLimiterUntilPetsRequest();
    try {
      const res = await api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'ordered', categoryId: 1 }) });
      expect(res.status).toBe(201);
    } finally {
      remove();
    }
    expect(events.indexOf('limiter done')).toBeLessThan(events.findIndex((e) => e.startsWith('pets ')));
  });

  it("a refused read's result is discarded: the answer is the 429", async () => {
    const now = freshDay();
    api.clock.set(() => now);
    for (let i = 0; i < 60; i++) await api.call('/pets/1');
    const res = await api.call('/pets/1');
    expect(res.status).toBe(429);
    expect(((await res.json()) as { code: string }).code).toBe('rate_limited');
  });
});

describe('never a 500 from the limiter', () => {
  let proxy: FaultProxy;
  let faulty: TestApi;
  beforeAll(async () => {
    proxy = await startFaultProxy(inject('dynamoEndpoint'));
    faulty = await startTestApi({ dynamoEndpoint: proxy.url });
  });
  afterAll(async () => {
    await faulty?.close();
    await proxy?.close();
  });

  it('an item DynamoDB refuses as too large is 503 with Retry-After and the rate-limit headers', async () => {
    proxy.add({
      target: 'UpdateItem',
      body: '"rl#',
      fault: {
        kind: 'error',
        status: 400,
        type: 'ValidationException',
        message: 'Item size to update has exceeded the maximum allowed size',
      },
    });
    const res = await faulty.call('/pets?limit=1');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});
