/**
 * The pre-traffic check's decision for a read operation or the authorizer: is the NEW version failing more of the
 * same requests than the version now live? Both get the same N requests, interleaved (new, old, new, old, …), so a
 * failure the stage causes for everyone (a throttled table, an outsider's known 500) lands on both alike; what
 * fails only on the new version is the release's.
 *
 * The test: conditioned on the total T = X + Y of failures (X of the new version's n, Y of the old's m), each failure
 * is the new version's with probability n / (n + m) when both fail at the same rate, so X is Binomial(T, n/(n+m));
 * the new version is worse when P(Binomial(T, n/(n+m)) >= X) <= alpha (the exact one-sided test of two binomial
 * rates, conditional on their sum: its false alarms are at most alpha whatever the shared rate), AND it failed at
 * least MIN_FAILURES requests. The check looks at the counts every LOOK_EVERY pairs and stops early at the far
 * smaller EARLY_ALPHA, so a version that breaks every request is stopped after a few dozen requests, not N.
 *
 * Why these figures (docs/deployment.md, "The pre-traffic check", and test/unit/pre-traffic-judge.test.ts, which
 * plays the decision on thousands of seeded runs):
 * - alpha = 1 %: the target allows a good release to be stopped in at most 1 % of deploys, and the conditional test
 *   is discrete, so its false alarms stay under alpha (about 0.5 % when both versions fail 5 %);
 * - N = 400: with the old version failing 0.1 % (Y = 0 mostly), the test needs X >= 7 (2^-7 = 0.8 % <= 1 %); a new
 *   version failing 5 % fails fewer than 7 of 400 in 0.3 % of runs, so it is stopped in 99.7 % (exact sum over X
 *   and Y); at N = 300 it is 97.3 %, short of the 99 % target;
 * - 15 early looks at 0.01 % add at most 0.15 % to the false alarms (a union bound).
 */

/** Requests sent to each version (the new one and the live one) of a read operation or the authorizer. */
export const REQUESTS_PER_VERSION = 400;
/** The new version's failures below which it is never judged worse, whatever the old version's count. */
export const MIN_FAILURES = 3;
/** The one-sided test's level at the end of the run. */
export const ALPHA = 0.01;
/** The level of each early look (every LOOK_EVERY pairs): a version that fails plainly is stopped early. */
export const EARLY_ALPHA = 1e-4;
/** Pairs (one request to each version) between two looks at the counts. */
export const LOOK_EVERY = 25;

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
 * The run as the hook makes it, over a source of pair outcomes (true: the request failed): `pairs` pairs, a look
 * every LOOK_EVERY, the final decision at the end. The hook (pre-traffic-check.ts) follows the same schedule; the
 * unit test plays it on random failures.
 */
export function judgeRun(pairs: number, pair: (i: number) => readonly [boolean, boolean]): Decision {
  let c: Counts = { newFailures: 0, newRequests: 0, oldFailures: 0, oldRequests: 0 };
  for (let i = 0; i < pairs; i++) {
    const [n, o] = pair(i);
    c = {
      newFailures: c.newFailures + (n ? 1 : 0),
      newRequests: c.newRequests + 1,
      oldFailures: c.oldFailures + (o ? 1 : 0),
      oldRequests: c.oldRequests + 1,
    };
    if ((i + 1) % LOOK_EVERY === 0 && i + 1 < pairs && judgeCounts(c, false) === 'worse') return 'worse';
  }
  return judgeCounts(c, true);
}
