/**
 * The deploy gates' constants (lib/constructs/version-gates.ts builds the alarms from them). Plain data, no CDK
 * import: the docs generator and the gate simulation (bench/models/gate-simulation.ts, which measures the rates
 * these values give) read them too.
 */

/** The gates' period: the longest bucket that can still fire inside the 10-minute canary (canary-timing.ts). */
export const GATE_PERIOD_SECONDS = 180;

/**
 * Standard deviations above the expected count (a one-sided normal bound on the binomial). A release rolls back
 * when any of its functions' gates fires: at 4, every gate at its worst good case at once stays under 1 %.
 */
export const GATE_SIGMAS = 4;

/** Failures above the bound the gate needs (its alarm threshold): a continuity correction for small counts. */
export const GATE_MARGIN = 0.5;

/** The new version's failures in the period below which nothing is judged: a normal bound needs a few. */
export const GATE_MIN_FAILURES = 3;

/**
 * How far below the canary's weight the new version's share may fall, in standard deviations of routing's noise
 * for N invocations (sqrt(weight (1 - weight) / N)). Flooring at the weight itself misses a failing version at
 * low traffic; a floor this far below it still holds against a burst timed to the bucket the shift starts in.
 */
export const GATE_FLOOR_SIGMAS = 2;
