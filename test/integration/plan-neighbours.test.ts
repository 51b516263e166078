/**
 * Every key of a plan counts on its plan's one API key, so all of them share that usage plan's bucket: a key must
 * still get its whole minute and its whole day while other keys of its plan flood far above their contract, are
 * spent, or are banned. On every plan, over HTTP through the local gateway as deployed (the template's authorizer
 * cache, usage plans and stage throttle), on the test's clock:
 * - near the end of a UTC day, with the neighbour's day counted up to two minutes short of its contract (as the
 *   limiter leaves it), a flooder sends its minute, its ban threshold of 429s and more, all within two seconds
 *   (about sixty times its contract's rate), beside a spent key and a banned key that keep sending;
 * - the neighbour sends its whole minute in that second, then its whole next minute, and is served every request,
 *   then refused by its own limiter (its day is spent) and by nothing else;
 * - once their cached Allows expire, the flooders, the spent key and the banned key are refused at the gateway: that
 *   minute the plan's API key counts the neighbour's requests alone.
 * The floods stay under the method's bucket (2,500/s on staging), which every caller of the method shares before the
 * authorizer: a flood above it is WAF's to stop (test/infra/edge-sources.test.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { banThreshold } from '../../contract/plans.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { setDayCounters } from '../helpers/key-standing.ts';
import {
  EVERY_PLAN,
  fire,
  planKey,
  planUsagePlan,
  registerKeys,
  spread,
  tallyOf,
  usedOnPlan,
} from '../helpers/plan-keys.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ devKeys: [], authCacheTtlSeconds: undefined });
});
afterAll(() => api?.close());

/** Requests each of the spent and the banned key sends a minute, and the flooder once its ban is known. */
const KNOCKS = 30;
/** How long the flooder takes to send its minute and its ban threshold of 429s. */
const FLOOD_MS = 2_000;
const AFTER_BAN = 200;

it.each(EVERY_PLAN.map((c, i) => [c.name, c, i] as const))(
  '%s: a key gets its whole minute and day while its plan’s other keys flood, are spent or banned',
  async (_name, c, i) => {
    const [neighbour, flooder, spent, banned] = Array.from({ length: 4 }, () => planKey(c));
    await registerKeys(api, [neighbour!, flooder!, spent!, banned!], 'neighbours-test');
    const { perMinute, perDay } = c.limits;
    const day = Date.UTC(2037, 0, 1 + i);
    const minute1 = day + 86_400_000 - 10 * 60_000; // 23:50
    const minute2 = minute1 + 60_000;
    await setDayCounters(api, neighbour!.keyId, minute1, { d: perDay - 2 * perMinute });
    await setDayCounters(api, spent!.keyId, minute1, { d: perDay });
    await setDayCounters(api, banned!.keyId, minute1, { d: 1, banUntil: minute1 / 1000 + 3_600 });

    // The flooder's minute and its ban threshold of 429s, and one more, within FLOOD_MS; then a few more from a second
    // after: its 429s are written towards the ban at most once a second, so those meet its ban.
    const flood = perMinute + banThreshold(c.limits) + 1;
    const s1 = minute1 + 1_000;
    const first = await fire(api, [
      ...spread('neighbour', neighbour!.key, perMinute, s1, 3_500),
      ...spread('flooder', flooder!.key, flood, s1, FLOOD_MS),
      ...spread('flooder', flooder!.key, 5, s1 + FLOOD_MS + 1_000, 2_500),
      ...spread('spent', spent!.key, KNOCKS, s1, 3_500),
      ...spread('banned', banned!.key, KNOCKS, s1, 3_500),
    ]);
    // Under the method's rate, which every caller of the method shares, and under the plan's.
    const perSecond = (flood * 1_000) / FLOOD_MS + ((perMinute + 2 * KNOCKS) * 1_000) / 3_500;
    expect(perSecond).toBeLessThan(api.model.stageThrottle!.default!.rateLimit);
    expect(perSecond).toBeLessThan(planUsagePlan(api, c.plan).rateLimit!);

    expect(tallyOf(first, 'neighbour')).toEqual({ 200: perMinute });
    const flooded = tallyOf(first, 'flooder');
    // Its minute at most (a leased key may leave a few of its tokens unused), then the limiter's 429s and its ban.
    expect(Object.keys(flooded).sort()).toEqual(['200', '429 key_banned', '429 rate_limited']);
    expect(flooded[200]).toBeLessThanOrEqual(perMinute);
    expect(flooded[200]).toBeGreaterThanOrEqual(Math.floor(0.95 * perMinute));
    expect(tallyOf(first, 'spent')).toEqual({ '429 quota_exceeded': KNOCKS });
    expect(tallyOf(first, 'banned')).toEqual({ '429 key_banned': KNOCKS });

    // The next minute, past the authorizer cache's TTL: the flood goes on, and the others knock, at the gateway's
    // Denies, counted nowhere; the neighbour gets its whole minute again, and with it its whole day.
    const counted = usedOnPlan(api, c.plan);
    const s2 = minute2 + 2_000;
    const then = await fire(api, [
      ...spread('neighbour', neighbour!.key, perMinute, s2, 3_500),
      ...spread('flooder', flooder!.key, AFTER_BAN, s2, 1_000),
      ...spread('spent', spent!.key, KNOCKS, s2, 3_500),
      ...spread('banned', banned!.key, KNOCKS, s2, 3_500),
    ]);
    expect(tallyOf(then, 'neighbour')).toEqual({ 200: perMinute });
    expect(tallyOf(then, 'flooder')).toEqual({ '429 key_banned': AFTER_BAN });
    expect(tallyOf(then, 'spent')).toEqual({ '429 quota_exceeded': KNOCKS });
    expect(tallyOf(then, 'banned')).toEqual({ '429 key_banned': KNOCKS });
    expect(usedOnPlan(api, c.plan) - counted, "the plan's API key counted the neighbour alone").toBe(perMinute);

    // Its day is spent: the next request is its own limiter's refusal.
    const after = await fire(api, [{ who: 'neighbour', key: neighbour!.key, atMs: minute2 + 60_000 }]);
    expect(tallyOf(after, 'neighbour')).toEqual({ '429 quota_exceeded': 1 });
  },
);
