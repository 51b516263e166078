/**
 * The pre-traffic check's decision for a read operation or the authorizer: does the NEW version fail more of the
 * same requests than the live one? Both get the same requests in interleaved pairs, so a failure the stage causes
 * (a throttled table, an outsider's known 500) lands on both alike.
 * A 429 counts against the version that alone answered it. A pair is not judged when both answered 429 (the check
 * key's budget is spent) or the hook's own invocation failed.
 * The test is exact and one-sided, conditional on the total failures (X of the new version's n, Y of the old's m):
 * worse when P(Binomial(X + Y, n/(n+m)) >= X) <= alpha and X >= MIN_FAILURES. Its false alarms stay under alpha
 * whatever the shared rate. Early looks at EARLY_ALPHA stop a plainly broken version after a few dozen pairs.
 * The run is `cannot-judge` (Failed), never `not-worse`, when the live version fails past LIVE_FLOOR or too few
 * pairs were judged. Figures: docs/deployment.md, "The pre-traffic check"; test/unit/pre-traffic-judge.test.ts.
 */

/**
 * Requests sent to each version (the new one and the live one) of a read operation or the authorizer. At 500, a new
 * version failing 5 % against a live 0.1 % is stopped in about 99.8 % of runs (400 would give 99.4 %).
 */
export const REQUESTS_PER_VERSION = 500;
/** The new version's failures below which it is never judged worse, whatever the old version's count. */
export const MIN_FAILURES = 3;
/**
 * The one-sided test's level at the end of the run. A release changes up to five functions and any failed check
 * rolls it back, so each check's false alarms stay far under the release's 1 %.
 */
export const ALPHA = 0.002;
/**
 * The level of each early look (every LOOK_EVERY pairs): a version that fails plainly is stopped early. The 19 looks
 * add at most 0.19 % to the false alarms (a union bound).
 */
export const EARLY_ALPHA = 1e-4;
/** Pairs (one request to each version) between two looks at the counts. */
export const LOOK_EVERY = 25;
/**
 * The share of judged requests the live version may fail; past it the run cannot judge the new one. A customer
 * flood fails about 7 %, far under it; a live version failing every request crosses it after 76 pairs.
 */
export const LIVE_FLOOR = 0.15;
/** The share of the planned pairs that must be judged; with fewer the run cannot judge (see above). */
export const MIN_JUDGED_SHARE = 0.9;

/** Failures and requests judged, per version. */
export interface Counts {
  readonly newFailures: number;
  readonly newRequests: number;
  readonly oldFailures: number;
  readonly oldRequests: number;
}

const logFactorials: number[] = [0];
const logFactorial = (n: number): number => {
  for (let i = logFactorials.length; i <= n; i++) logFactorials.push(logFactorials[i - 1]! + Math.log(i));
  return logFactorials[n]!;
};

/** P(Binomial(n, p) >= k). */
export function binomialUpperTail(n: number, p: number, k: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const term = (i: number) =>
    Math.exp(logFactorial(n) - logFactorial(i) - logFactorial(n - i) + i * Math.log(p) + (n - i) * Math.log(1 - p));
  let sum = 0;
  for (let i = k; i <= n; i++) {
    const t = term(i);
    sum += t;
    // Past the mean the terms fall geometrically: the rest no longer moves the sum.
    if (i > n * p && t < sum * 1e-15) break;
  }
  return Math.min(1, sum);
}

/** The one-sided p-value of "the new version fails no more often than the old one", given the counts. */
export function regressionPValue(c: Counts): number {
  if (c.newRequests === 0) return 1;
  // No request of the old version judged: nothing to compare against, so every failure is the new version's.
  if (c.oldRequests === 0) return c.newFailures > 0 ? 0 : 1;
  const total = c.newFailures + c.oldFailures;
  return binomialUpperTail(total, c.newRequests / (c.newRequests + c.oldRequests), c.newFailures);
}

export type Decision = 'worse' | 'not-worse' | 'undecided';

/**
 * The decision at a look (`final` false: only a plain regression stops the run) or at the end of the run. A version
 * that is not worse than the live one is `not-worse` even when both fail: the check judges the release, and the
 * failures both versions share are the stage's, or the live version's own (the canary gates and alarms see those).
 */
export function judgeCounts(c: Counts, final: boolean): Decision {
  const worse = c.newFailures >= MIN_FAILURES && regressionPValue(c) <= (final ? ALPHA : EARLY_ALPHA);
  if (worse) return 'worse';
  return final ? 'not-worse' : 'undecided';
}

/**
 * How one version's side of a pair ended: judged good (`ok`), judged failed (`failed`: a Lambda error, a result off
 * the contract), answered 429 (`limited`), or not known (`lost`: the hook's own invocation threw).
 */
export type Answer = 'ok' | 'failed' | 'limited' | 'lost';

/** What a pair says about each version, or undefined when it judges neither (see the top of this file). */
export function scorePair(
  n: Answer,
  o: Answer,
): { readonly newFailed: boolean; readonly oldFailed: boolean } | undefined {
  if (n === 'lost' || o === 'lost' || (n === 'limited' && o === 'limited')) return undefined;
  return { newFailed: n !== 'ok', oldFailed: o !== 'ok' };
}

/** The counts of a run so far: the judged pairs' failures, and the pairs judged neither way and why. */
export interface Tally extends Counts {
  /** Pairs both versions answered 429. */
  readonly bothLimited: number;
  /** Pairs in which the hook's own invocation failed. */
  readonly lost: number;
}

export const EMPTY_TALLY: Tally = {
  newFailures: 0,
  newRequests: 0,
  oldFailures: 0,
  oldRequests: 0,
  bothLimited: 0,
  lost: 0,
};

/** The tally with one more pair. */
export function addPair(t: Tally, n: Answer, o: Answer): Tally {
  const s = scorePair(n, o);
  if (!s) return n === 'lost' || o === 'lost' ? { ...t, lost: t.lost + 1 } : { ...t, bothLimited: t.bothLimited + 1 };
  return {
    ...t,
    newFailures: t.newFailures + (s.newFailed ? 1 : 0),
    newRequests: t.newRequests + 1,
    oldFailures: t.oldFailures + (s.oldFailed ? 1 : 0),
    oldRequests: t.oldRequests + 1,
  };
}

/** Why a run of `planned` pairs cannot judge, once certain whatever pairs are to come (`final`: at its end). */
export type Floor = { readonly live: true } | { readonly unjudged: true };

export function floorOf(t: Tally, planned: number, final: boolean): Floor | undefined {
  // Both bounds hold for the run's end as soon as they are crossed: the judged pairs can only be fewer than planned.
  if (t.bothLimited + t.lost > planned * (1 - MIN_JUDGED_SHARE)) return { unjudged: true };
  if (t.oldFailures > planned * LIVE_FLOOR) return { live: true };
  if (final && t.oldFailures > t.oldRequests * LIVE_FLOOR) return { live: true };
  return undefined;
}

/** The decision on a whole run: the new version is worse, it is not, or the run cannot tell (the floor). */
export type RunDecision = 'worse' | 'not-worse' | 'cannot-judge';

/**
 * The decision at a look (`final` false) or at the end of the run. A plain regression is `worse` even when the
 * floor is crossed too (both are Failed; the regression says more).
 */
export function judgeTally(t: Tally, planned: number, final: boolean): RunDecision | 'undecided' {
  if (judgeCounts(t, final) === 'worse') return 'worse';
  if (floorOf(t, planned, final)) return 'cannot-judge';
  return final ? 'not-worse' : 'undecided';
}

/**
 * How often one version's side of a pair ends each way, for a simulation: `fails` (judged failed), `limited` (429),
 * `lost` (the hook's own invocation fails); the rest is ok.
 */
export interface AnswerRates {
  readonly fails: number;
  readonly limited?: number;
  readonly lost?: number;
}

/** One random side of a pair at these rates (one draw of `random`, uniform on [0, 1)). */
export function randomAnswer(rates: AnswerRates, random: () => number): Answer {
  const u = random();
  if (u < (rates.lost ?? 0)) return 'lost';
  if (u < (rates.lost ?? 0) + (rates.limited ?? 0)) return 'limited';
  return u < (rates.lost ?? 0) + (rates.limited ?? 0) + rates.fails ? 'failed' : 'ok';
}

/** One side of a pair in a simulation: true (failed), false (ok), or an Answer. */
export type SimulatedAnswer = boolean | Answer;

const answerOf = (a: SimulatedAnswer): Answer => (a === true ? 'failed' : a === false ? 'ok' : a);

/**
 * The run as the hook makes it, over a source of pair outcomes (true: the request failed; or an Answer): `pairs`
 * pairs, the floor checked after each pair, a look every LOOK_EVERY, the final decision at the end. The hook
 * (pre-traffic-check.ts compareVersions) follows the same schedule; the unit test and the release-level simulation
 * play it on random failures.
 */
export function judgeRun(pairs: number, pair: (i: number) => readonly [SimulatedAnswer, SimulatedAnswer]): RunDecision {
  let t = EMPTY_TALLY;
  for (let i = 0; i < pairs; i++) {
    const [n, o] = pair(i);
    t = addPair(t, answerOf(n), answerOf(o));
    if (floorOf(t, pairs, false)) return 'cannot-judge';
    if ((i + 1) % LOOK_EVERY === 0 && i + 1 < pairs && judgeTally(t, pairs, false) === 'worse') return 'worse';
  }
  const final = judgeTally(t, pairs, true);
  return final === 'undecided' ? 'not-worse' : final;
}
