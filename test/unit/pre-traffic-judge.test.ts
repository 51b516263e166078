/**
 * The pre-traffic check's decision for a read operation or the authorizer (lambdas/hooks/pre-traffic-judge.ts),
 * played on thousands of hook runs with seeded random failures, on the hook's own schedule (N pairs, the floor after
 * each pair, a look every LOOK_EVERY): how often a release that fails a steady share of its requests is stopped
 * before any traffic, how often a good one is stopped by failures the live version shares (the customer flood's 503s
 * included), and that the check says it cannot judge when the live version is broken or too little was judged.
 * docs/deployment.md ("The pre-traffic check") states these rates; the seed makes them the same on every run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_TALLY,
  REQUESTS_PER_VERSION,
  addPair,
  binomialUpperTail,
  floorOf,
  judgeCounts,
  judgeRun,
  randomAnswer,
  regressionPValue,
  scorePair,
  type AnswerRates,
  type RunDecision,
} from '../../lambdas/hooks/pre-traffic-judge.ts';
// Seeded (mulberry32), so a random share fails the same requests on every run and the measured rates repeat.
import { random as seeded } from '../../bench/models/sampling.ts';

const RUNS = 5_000;

/** How RUNS hook runs end when each version's answers come at these rates. */
function play(pNew: AnswerRates, pOld: AnswerRates, seed: number): Record<RunDecision, number> {
  const random = seeded(seed);
  const out: Record<RunDecision, number> = { worse: 0, 'not-worse': 0, 'cannot-judge': 0 };
  for (let r = 0; r < RUNS; r++)
    out[judgeRun(REQUESTS_PER_VERSION, () => [randomAnswer(pNew, random), randomAnswer(pOld, random)])]++;
  return out;
}

const fails = (p: number): AnswerRates => ({ fails: p });
/** The same answers from the new version and the live one. */
const both = (r: AnswerRates): [AnswerRates, AnswerRates] => [r, r];

/**
 * The cases docs/deployment.md tabulates: [what, the new version's answers, the live one's, what the check must
 * say]. A good release (`not-worse`) is Failed in at most 1 % of runs; a bad one (`worse`) in at least 99 %; a run
 * that cannot judge says so in at least 99 %.
 */
const JUDGE_CASES: readonly [string, AnswerRates, AnswerRates, RunDecision][] = [
  ['the new version fails 5 %, the live one 0.1 %', fails(0.05), fails(0.001), 'worse'],
  ['the new version fails 10 %, the live one 1 %', fails(0.1), fails(0.01), 'worse'],
  ['the new version fails every request', fails(1), fails(0.001), 'worse'],
  ['both fail 0.1 %', fails(0.001), fails(0.001), 'not-worse'],
  ['both fail 1 %', fails(0.01), fails(0.01), 'not-worse'],
  ['both fail 5 % (the live version fails as much itself)', fails(0.05), fails(0.05), 'not-worse'],
  ['both fail 7 % (a customer flood: 2 % Lambda errors and 5 % 503s)', fails(0.07), fails(0.07), 'not-worse'],
  ['the live version fails 5 %, the new one 0.1 % (a fix)', fails(0.001), fails(0.05), 'not-worse'],
  // Added with the floor and the paired 429s; the rows above keep their seeds (and so their measured rates).
  ['the new version answers 429 to 5 %, the live one fails 0.1 %', { fails: 0, limited: 0.05 }, fails(0.001), 'worse'],
  ['both answer 429 to 5 % and fail 0.1 %', ...both({ fails: 0.001, limited: 0.05 }), 'not-worse'],
  ["the hook's own invocations fail 2 %, both versions 0.1 %", ...both({ fails: 0.001, lost: 0.02 }), 'not-worse'],
  ['the live version fails every request (cannot judge)', fails(0.001), fails(1), 'cannot-judge'],
  ['both fail every request (cannot judge)', fails(1), fails(1), 'cannot-judge'],
  [
    "both answer 429 to every request: the check's key is spent (cannot judge)",
    ...both({ fails: 0, limited: 1 }),
    'cannot-judge',
  ],
  ["the hook's own invocations fail 20 % (cannot judge)", ...both({ fails: 0.001, lost: 0.2 }), 'cannot-judge'],
];

describe('the decision on seeded random failures, 5,000 hook runs a case', () => {
  const rates = JUDGE_CASES.map(([what, pNew, pOld, expected], i) => {
    const out = play(pNew, pOld, 55 + i);
    return { what, expected, out, failed: (out.worse + out['cannot-judge']) / RUNS };
  });

  it('a new version failing 5 % of its requests, or answering 429 to 5 %, is Failed as worse in at least 99 % of hook runs', () => {
    for (const r of rates.filter((x) => x.expected === 'worse'))
      expect(r.out.worse / RUNS, r.what).toBeGreaterThanOrEqual(0.99);
  });

  it("a good version (both 0.1 %, 1 %, a customer flood's 5 % on both, a fix, shared 429s, the hook's own errors) is Failed in at most 1 %", () => {
    for (const r of rates.filter((x) => x.expected === 'not-worse')) expect(r.failed, r.what).toBeLessThanOrEqual(0.01);
  });

  it('a live version failing everything, a spent key and a hook whose invocations fail say "cannot judge", never Succeeded', () => {
    for (const r of rates.filter((x) => x.expected === 'cannot-judge')) {
      expect(r.out['cannot-judge'] / RUNS, r.what).toBeGreaterThanOrEqual(0.99);
      expect(r.out['not-worse'], r.what).toBe(0);
    }
  });

  it('docs/deployment.md states these rates, row for row', () => {
    const doc = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
    for (const r of rates) expect(doc).toContain(`| ${r.what} | ${(r.failed * 100).toFixed(2)} % |`);
  });
});

describe('the test itself', () => {
  it('the binomial tail is exact on small cases', () => {
    expect(binomialUpperTail(7, 0.5, 7)).toBeCloseTo(1 / 128, 12);
    expect(binomialUpperTail(10, 0.5, 0)).toBe(1);
    expect(binomialUpperTail(3, 0.2, 2)).toBeCloseTo(3 * 0.04 * 0.8 + 0.008, 12);
  });

  it('the floor: a live version failing more than 15 % crosses it, the customer flood does not (P(Bin(500, 7 %) > 75) = 2e-10)', () => {
    expect(binomialUpperTail(500, 0.07, 76)).toBeLessThan(1e-9);
    const judged = { ...EMPTY_TALLY, newRequests: 500, oldRequests: 500 };
    expect(floorOf({ ...judged, oldFailures: 75 }, 500, true)).toBeUndefined();
    expect(floorOf({ ...judged, oldFailures: 76 }, 500, true)).toEqual({ live: true });
    // Certain before the end: 76 of the 500 planned pairs failed on the live version.
    expect(floorOf({ ...EMPTY_TALLY, oldFailures: 76, oldRequests: 76, newRequests: 76 }, 500, false)).toEqual({
      live: true,
    });
    expect(floorOf({ ...judged, bothLimited: 40, lost: 11 }, 500, false)).toEqual({ unjudged: true });
  });

  it('each 429 is judged against its pair: one side alone is that side failing, both is no judgement', () => {
    expect(scorePair('limited', 'ok')).toEqual({ newFailed: true, oldFailed: false });
    expect(scorePair('ok', 'limited')).toEqual({ newFailed: false, oldFailed: true });
    expect(scorePair('limited', 'limited')).toBeUndefined();
    expect(scorePair('lost', 'ok')).toBeUndefined();
    expect(addPair(EMPTY_TALLY, 'limited', 'limited')).toEqual({ ...EMPTY_TALLY, bothLimited: 1 });
    expect(addPair(EMPTY_TALLY, 'ok', 'lost')).toEqual({ ...EMPTY_TALLY, lost: 1 });
  });

  it('a new version answering 429 to 2 % (10 of 500, the live one none) is worse', () => {
    expect(judgeRun(REQUESTS_PER_VERSION, (i) => [i % 50 === 49 ? 'limited' : 'ok', 'ok'])).toBe('worse');
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
