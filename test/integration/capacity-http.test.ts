/**
 * No customer is refused by another customer or by our own guard while inside its contract, over HTTP through the
 * local gateway (the staging template: its usage plans, the authorizer's reserved concurrency and cache, the stage
 * throttle), on a clock the test moves:
 * - a key sending its whole minute and just under its ban threshold every minute, and a neighbour of its plan (both
 *   count on the plan's one API key, so share its usage plan), on Free, Pro, Business and Enterprise, get no 429
 *   from the gateway;
 * - a fresh Free key's 150 parallel requests: exactly its 60 admitted, 429 for the rest, no 5xx;
 * - 80 workers of one Free key honouring Retry-After, and 48 in flight on one key with the template's cache and with
 *   none (ANIMAL_STORE_AUTH_CACHE_TTL=0): no 5xx;
 * - an Enterprise key sold 5,000/min gets its 5,000 in a minute.
 * The gateway's own 429 is told apart from the limiter's by its static headers (X-RateLimit-Limit: 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { banThreshold, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { generateKey, generateKeyId } from '../../lambdas/domain/keys.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { EVERY_PLAN, planKey, registerKeys, type PlanKey } from '../helpers/plan-keys.ts';

/** A minute boundary far from any real one, so the test's windows are its own. */
const T0 = Date.UTC(2035, 5, 1, 0, 0, 0);

interface Tally {
  ok: number;
  limiter429: number;
  gateway429: number;
  other: Map<number, number>;
}
const tally = (): Tally => ({ ok: 0, limiter429: 0, gateway429: 0, other: new Map() });

async function note(t: Tally, res: Response): Promise<void> {
  await res.arrayBuffer();
  if (res.status === 200) t.ok++;
  else if (res.status === 429 && res.headers.get('x-ratelimit-limit') === '0') t.gateway429++;
  else if (res.status === 429) t.limiter429++;
  else t.other.set(res.status, (t.other.get(res.status) ?? 0) + 1);
}

const register = (api: TestApi, keys: readonly PlanKey[]) => registerKeys(api, keys, 'capacity-test');

const keyOf = (plan: PlanName, limits: PlanLimits): PlanKey => ({
  key: generateKey(),
  keyId: generateKeyId(),
  plan,
  limits,
});

/** `n` requests of `key` with `inFlight` at a time, the clock moved `stepMs` before each. */
async function send(
  api: TestApi,
  key: string,
  n: number,
  inFlight: number,
  clock: { t: number },
  stepMs = 0,
): Promise<Tally> {
  const t = tally();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      clock.t += stepMs;
      await note(t, await api.call('/pets?limit=1', { key, contract: false }));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return t;
}

describe('neighbours on one plan', () => {
  let api: TestApi;
  const clock = { t: T0 };
  const pairs = EVERY_PLAN.map((c) => ({ ...c, a: planKey(c), b: planKey(c) }));
  beforeAll(async () => {
    // The template's authorizer cache; the stage throttle off: each second's requests are sent at one instant here,
    // where a real client spreads them (stage-throttle.test.ts tests that hop).
    api = await startTestApi({ devKeys: [], authCacheTtlSeconds: undefined, stageThrottle: false });
    api.clock.set(() => clock.t);
    await register(
      api,
      pairs.flatMap((p) => [p.a, p.b]),
    );
  });
  afterAll(() => api?.close());

  it.each(pairs.map((p) => [p.name, p] as const))(
    '%s: A sends its minute and just under its ban every minute; B, inside its plan, gets no gateway 429',
    async (_name, p) => {
      // A: its whole budget and banThreshold - 1 of 429s each minute (never banned); B: a third of its minute.
      const aPerMinute = p.a.limits.perMinute + banThreshold(p.a.limits) - 1;
      const bPerMinute = Math.floor(p.b.limits.perMinute / 3);
      const a = tally();
      const b = tally();
      const start = clock.t;
      for (let minute = 0; minute < 3; minute++)
        for (let second = 0; second < 60; second += 5) {
          clock.t = start + minute * 60_000 + second * 1000 + 100;
          const share = (perMinute: number) =>
            Math.floor((perMinute * (second + 5)) / 60) - Math.floor((perMinute * second) / 60);
          const [ra, rb] = await Promise.all([
            send(api, p.a.key, share(aPerMinute), 25, clock),
            send(api, p.b.key, share(bPerMinute), 5, clock),
          ]);
          for (const [into, from] of [
            [a, ra],
            [b, rb],
          ] as const) {
            into.ok += from.ok;
            into.limiter429 += from.limiter429;
            into.gateway429 += from.gateway429;
            for (const [s, n] of from.other) into.other.set(s, (into.other.get(s) ?? 0) + n);
          }
        }
      clock.t = start + 4 * 60_000;
      expect({ ...b, other: Object.fromEntries(b.other) }).toEqual({
        ok: 3 * bPerMinute,
        limiter429: 0,
        gateway429: 0,
        other: {},
      });
      // A got its budget each minute (a leased Enterprise key may leave a few tokens unused), the limiter's 429s
      // for the rest, and was never banned or refused by the gateway.
      expect(a.ok).toBeLessThanOrEqual(3 * p.a.limits.perMinute);
      expect(a.ok).toBeGreaterThanOrEqual(Math.floor(0.95 * 3 * p.a.limits.perMinute));
      expect(a.gateway429).toBe(0);
      expect(Object.fromEntries(a.other)).toEqual({});
    },
  );
});

describe('bursts and fleets at the authorizer', () => {
  let api: TestApi;
  let uncached: TestApi;
  const clock = { t: T0 };
  beforeAll(async () => {
    // As deployed: the template's authorizer cache, its reserved concurrency, the stage throttle.
    api = await startTestApi({ devKeys: [], authCacheTtlSeconds: undefined, reservedConcurrency: true });
    api.clock.set(() => clock.t);
    // As documented for seeing revocations at once: no cache, every request invokes the authorizer.
    uncached = await startTestApi({ devKeys: [], authCacheTtlSeconds: 0, reservedConcurrency: true });
    uncached.clock.set(() => clock.t);
  });
  afterAll(async () => {
    await api?.close();
    await uncached?.close();
  });

  it("a fresh Free key's first 150 parallel requests: exactly its 60 admitted, 429 for the rest, no 5xx", async () => {
    const k = keyOf('free', { perMinute: 60, perDay: 1_000 });
    await register(api, [k]);
    clock.t = T0 + 60 * 60_000 + 100; // one instant: the stage's bucket does not refill during the burst
    const t = tally();
    await Promise.all(
      Array.from({ length: 150 }, async () =>
        note(t, await api.call('/pets?limit=1', { key: k.key, contract: false })),
      ),
    );
    expect(Object.fromEntries(t.other)).toEqual({});
    expect(t.ok).toBe(60);
    expect(t.limiter429 + t.gateway429).toBe(90);
  });

  it('80 workers of one Free key honouring Retry-After: each window its 60, no 5xx', async () => {
    const k = keyOf('free', { perMinute: 60, perDay: 1_000 });
    await register(api, [k]);
    for (let window = 0; window < 3; window++) {
      // Each worker sends, is told 429 with Retry-After to the window's end, and comes back when it ends.
      clock.t = T0 + (70 + window) * 60_000 + 200;
      const t = tally();
      await Promise.all(
        Array.from({ length: 80 }, async () =>
          note(t, await api.call('/pets?limit=1', { key: k.key, contract: false })),
        ),
      );
      expect({ window, ok: t.ok, other: Object.fromEntries(t.other) }).toEqual({ window, ok: 60, other: {} });
    }
  });

  it.each([
    ['the template’s cache', () => api],
    ['no cache (ANIMAL_STORE_AUTH_CACHE_TTL=0)', () => uncached],
  ])('48 in flight on one key with %s: no 5xx', async (_name, which) => {
    const target = which();
    const k = keyOf('business', { perMinute: 1_000, perDay: 100_000 });
    await register(target, [k]);
    clock.t = T0 + 100 * 60_000;
    // 3,000 requests over 3 s: the key's minute, then the limiter's 429s (and its ban), never a 5xx.
    const t = await send(target, k.key, 3_000, 48, clock, 1);
    expect(Object.fromEntries(t.other)).toEqual({});
    expect(t.ok).toBe(1_000);
  });

  it('an Enterprise key sold 5,000/min gets its 5,000 in a minute, from 40 workers', async () => {
    const k = keyOf('enterprise', { perMinute: 5_000, perDay: 1_000_000 });
    await register(api, [k]);
    clock.t = T0 + 120 * 60_000;
    const t = await send(api, k.key, 5_000, 40, clock, 11);
    expect({ ok: t.ok, gateway429: t.gateway429, other: Object.fromEntries(t.other) }).toEqual({
      ok: 5_000,
      gateway429: 0,
      other: {},
    });
  });
});
