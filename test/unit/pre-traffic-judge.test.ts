/**
 * The pre-traffic check's decision for a read operation or the authorizer (lambdas/hooks/pre-traffic-judge.ts),
 * played on thousands of hook runs with seeded random failures, on the hook's own schedule (N pairs, a look every
 * LOOK_EVERY): how often a release that fails a steady share of its requests is stopped before any traffic, and how
 * often a good one is stopped by failures the live version shares. docs/deployment.md ("The pre-traffic check")
 * states these rates; the seed makes them the same on every run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  REQUESTS_PER_VERSION,
  binomialUpperTail,
  judgeCounts,
  judgeRun,
  regressionPValue,
} from '../../lambdas/hooks/pre-traffic-judge.ts';
// Seeded (mulberry32), so a random share fails the same requests on every run and the measured rates repeat.
import { random as seeded } from '../../lib/stacks/gate-simulation.ts';

const RUNS = 5_000;

/** The share of RUNS hook runs judged `worse` when the new version fails `pNew` of its requests and the live `pOld`. */
function failedShare(pNew: number, pOld: number, seed: number): number {
  const random = seeded(seed);
  let failed = 0;
  for (let r = 0; r < RUNS; r++)
    if (judgeRun(REQUESTS_PER_VERSION, () => [random() < pNew, random() < pOld]) === 'worse') failed++;
  return failed / RUNS;
}

/** The cases docs/deployment.md tabulates: [what, new version's failure rate, live version's, bad?]. */
const JUDGE_CASES: readonly [string, number, number, boolean][] = [
  ['the new version fails 5 %, the live one 0.1 %', 0.05, 0.001, true],
  ['the new version fails 10 %, the live one 1 %', 0.1, 0.01, true],
  ['the new version fails every request', 1, 0.001, true],
  ['both fail 0.1 %', 0.001, 0.001, false],
  ['both fail 1 %', 0.01, 0.01, false],
  ['both fail 5 % (the live version fails as much itself)', 0.05, 0.05, false],
  ['the live version fails 5 %, the new one 0.1 % (a fix)', 0.001, 0.05, false],
];

describe('the decision on seeded random failures, 5,000 hook runs a case', () => {
  const rates = JUDGE_CASES.map(([what, pNew, pOld, bad], i) => ({
    what,
    bad,
    share: failedShare(pNew, pOld, 55 + i),
  }));

  it('a new version failing 5 % of its requests (the live one 0.1 %) is Failed in at least 99 % of hook runs', () => {
    expect(rates[0]!.share).toBeGreaterThanOrEqual(0.99);
    for (const r of rates.filter((x) => x.bad)) expect(r.share, r.what).toBeGreaterThanOrEqual(0.99);
  });

  it('a good version (both 0.1 %, both 1 %, the live one itself failing 5 %, a fix) is Failed in at most 1 %', () => {
    for (const r of rates.filter((x) => !x.bad)) expect(r.share, r.what).toBeLessThanOrEqual(0.01);
  });

  it('docs/deployment.md states these rates, row for row', () => {
    const doc = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
    for (const r of rates) expect(doc).toContain(`| ${r.what} | ${(r.share * 100).toFixed(2)} % |`);
  });
});

describe('the test itself', () => {
  it('the binomial tail is exact on small cases', () => {
    expect(binomialUpperTail(7, 0.5, 7)).toBeCloseTo(1 / 128, 12);
    expect(binomialUpperTail(10, 0.5, 0)).toBe(1);
    expect(binomialUpperTail(3, 0.2, 2)).toBeCloseTo(3 * 0.04 * 0.8 + 0.008, 12);
  });

  it('failures both versions share are not a regression; the new version failing alone is', () => {
    const shared = { newFailures: 20, newRequests: 400, oldFailures: 20, oldRequests: 400 };
    expect(judgeCounts(shared, true)).toBe('not-worse');
    expect(judgeCounts({ ...shared, oldFailures: 0 }, true)).toBe('worse');
    // Fewer than the minimum: never worse, whatever the old count.
    expect(judgeCounts({ newFailures: 2, newRequests: 400, oldFailures: 0, oldRequests: 400 }, true)).toBe('not-worse');
    // An early look stops only a plain regression.
    expect(judgeCounts({ newFailures: 8, newRequests: 25, oldFailures: 0, oldRequests: 25 }, false)).toBe('undecided');
    expect(judgeCounts({ newFailures: 25, newRequests: 25, oldFailures: 0, oldRequests: 25 }, false)).toBe('worse');
  });

  it('unequal counts are weighed by the requests each version answered', () => {
    expect(regressionPValue({ newFailures: 4, newRequests: 100, oldFailures: 4, oldRequests: 100 })).toBeGreaterThan(
      0.5,
    );
    expect(regressionPValue({ newFailures: 4, newRequests: 400, oldFailures: 1, oldRequests: 100 })).toBeGreaterThan(
      0.5,
    );
  });
});
