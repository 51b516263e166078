/**
 * Simulated clients for the usage-plan model (usage-plan-model.ts), on a simulated clock.
 */
import { BAN_POLICY, LIMITER, type PlanLimits } from '../../contract/plans.ts';
import { GatewayModel, honouredUntil, type Outcome } from './usage-plan-model.ts';

export interface Burst {
  /** Wait this long after the previous burst (ms)... */
  readonly gapMs: number;
  /**
   * Instead: start at the first minute boundary after the previous burst began (or at once if that has passed), as
   * soon as X-RateLimit-Reset allows a whole new budget.
   */
  readonly toBoundary: boolean;
  readonly count: number;
  /** Requests in flight at once (the client learns their answers together). */
  readonly inFlight: number;
  /** After a 429: wait until X-RateLimit-Reset, or for Retry-After seconds. */
  readonly prefer: 'reset' | 'retry-after';
  /** Time between sending a batch and the next one (ms). */
  readonly latencyMs: number;
}

/** A Monday 00:00 UTC: the simulations start within the day after it. */
export const EPOCH_MS = Date.UTC(2026, 0, 5);

/**
 * A client that honours the headers: after a 429 it sends nothing until the Retry-After or X-RateLimit-Reset it
 * was given, after X-RateLimit-Remaining: 0 nothing until X-RateLimit-Reset, and it never has more requests in
 * flight than BAN_POLICY.fleetWorkers. Within that, it sends as soon as it may: it keeps sending while it
 * has requests to send, so it receives every 429 those rules still allow.
 */
export async function honouringClient(
  gw: GatewayModel,
  bursts: readonly Burst[],
  startMs: number,
  untilMs = Infinity,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let t = startMs;
  let blockedUntil = 0;
  let began = startMs;
  for (const b of bursts) {
    if (b.inFlight > BAN_POLICY.fleetWorkers) throw new Error('not an honouring client');
    t = b.toBoundary ? Math.max(t, (Math.floor(began / 60_000) + 1) * 60_000) : t + b.gapMs;
    began = t;
    for (let left = b.count; left > 0;) {
      t = Math.max(t, blockedUntil);
      if (t >= untilMs) return outcomes;
      const n = Math.min(b.inFlight, left);
      const batch: Outcome[] = [];
      for (let i = 0; i < n; i++) batch.push(await gw.request(t));
      for (const o of batch) blockedUntil = Math.max(blockedUntil, honouredUntil(o, t, b.prefer));
      outcomes.push(...batch);
      left -= n;
      t += b.latencyMs;
    }
  }
  return outcomes;
}

/** A client that honours the headers and always has the most requests in flight: it uses up every window. */
export const greedyClient = (gw: GatewayModel, startMs: number, untilMs: number, prefer: Burst['prefer'] = 'reset') =>
  honouringClient(
    gw,
    [{ gapMs: 0, toBoundary: false, count: Infinity, inFlight: BAN_POLICY.fleetWorkers, prefer, latencyMs: 0 }],
    startMs,
    untilMs,
  );

/**
 * A whole minute's budget (and the 429s of the requests still in flight) at the very end of a window, and another
 * right after the boundary, as X-RateLimit-Reset allows: two windows within a millisecond.
 */
export function boundaryBursts(limits: PlanLimits): Burst[] {
  const burst = {
    count: limits.perMinute + BAN_POLICY.fleetWorkers,
    // One short of the fleet, so a batch in flight straddles the limit (the plans' limits are multiples of 100).
    inFlight: BAN_POLICY.fleetWorkers - 1,
    prefer: 'reset',
    latencyMs: 0,
  } as const;
  return [
    // Just before the last LIMITER.maxSkewMs of the window, where a full window is no longer reopened early.
    { ...burst, gapMs: 60_000 - LIMITER.maxSkewMs - 1, toBoundary: false },
    { ...burst, gapMs: 0, toBoundary: true },
  ];
}
