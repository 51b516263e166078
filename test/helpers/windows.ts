/** What a leased key's simulated windows must show, on either kind of counters. */
import { expect } from 'vitest';
import type { PlanLimits } from '../../contract/plans.ts';
import { fullWindowShares, type SimResult } from '../../bench/lib/limiter-sim.ts';

/** Every window whose budget ran out (at least two of them) admitted 95-100 % of the limit: never more. */
export function expectFullWindowsFilled(r: SimResult, limits: PlanLimits): void {
  const shares = fullWindowShares(r, limits);
  expect(shares.length).toBeGreaterThanOrEqual(2);
  expect(Math.max(...shares)).toBeLessThanOrEqual(1);
  expect(Math.min(...shares)).toBeGreaterThanOrEqual(0.95);
}
