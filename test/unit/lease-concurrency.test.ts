/**
 * Leased keys with many requests in flight: overlapping takes through one container (the local server, or any
 * runtime that overlaps requests) and across several. In-memory counters with the adapter's semantics; the same
 * cases run on DynamoDB Local in test/integration/lease-concurrency.test.ts and in the bench's scale table.
 */
import { describe, expect, it } from 'vitest';
import { LIMITER } from '../../contract/plans.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { createLimiter } from '../../lambdas/domain/limiter.ts';
import { seeded, simulate } from '../../bench/lib/limiter-sim.ts';
import { expectFullWindowsFilled } from '../helpers/windows.ts';
import { steady } from '../../bench/lib/traffic.ts';
import { MemoryCounters } from '../helpers/memory-counters.ts';

// Seven seconds into a minute, so the first window is a partial one.
const START = Date.UTC(2031, 4, 6, 10, 0, 7);
const enterprise = (perMinute: number) => ({ perMinute, perDay: perMinute * 1_440 });

describe('a leased key with many requests in flight gets its whole limit, never more', () => {
  const cases = [];
  for (const perMinute of [2_000, 20_000])
    for (const [where, inFlight, perContainer, serviceMs] of [
      ['one container', 40, Infinity, 200],
      ['containers of 10', 40, 10, 200],
      ['one request per container', 200, 1, 2_000],
    ] as const)
      cases.push({ perMinute, where, inFlight, perContainer, serviceMs });
  it.each(cases)(
    '$perMinute/min, $inFlight in flight, $where, clocks 1 s apart, 1.2x its limit',
    async ({ perMinute, inFlight, perContainer, serviceMs }) => {
      const limits = enterprise(perMinute);
      const r = await simulate(new MemoryCounters(), {
        limits,
        startMs: START,
        traffic: steady((1.2 * perMinute) / 60, 150),
        inFlight,
        perContainer,
        serviceMs,
        skewMs: LIMITER.maxSkewMs,
        random: seeded(3),
      });
      expectFullWindowsFilled(r, limits);
      expect(r.byStatus.key_banned ?? 0).toBe(0);
    },
  );

  it('40 overlapping requests in one container are charged for what they were admitted, plus one lease at most', async () => {
    const counters = new MemoryCounters();
    const limiter = createLimiter(counters);
    const limits = enterprise(2_000);
    let admitted = 0;
    for (let round = 0; round < 25; round++) {
      const w = windowsAt(START + round * 100);
      const out = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('k', limits, w)));
      admitted += out.filter((c) => c.allowed).length;
    }
    const charged = [...counters.items.values()].reduce((n, it) => n + (it.m ?? 0), 0);
    expect(admitted).toBe(1_000);
    expect(charged - admitted).toBeLessThanOrEqual(limits.perMinute / LIMITER.leasesPerShardWindow);
  });
});
