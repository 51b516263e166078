/**
 * The bake played on thousands of seeded deploys of a write (bench/models/bake-simulation.ts: the previous version's
 * day, the canary, the shift, CloudWatch's minutes read late, the hook's own decision at each look): a good release
 * is rolled back in at most 0.5 % of deploys, a version failing 5 points more is stopped in at least 99 % from 10
 * requests a minute, and the minutes it adds to a release are those the docs state. A customer flood failing both
 * versions from the deploy on, and an outsider's burst of known-500s at 1,000 req/min, are judged against the
 * previous version in the canary and do not roll a good release back; a version failing 5 points more in the flood
 * is stopped.
 */
import { describe, expect, it } from 'vitest';
import {
  BAKE_ADDED_MINUTES,
  BAKE_CASES,
  DEPLOYS_PER_CASE,
  bakeAddedMinutes,
  bakeRatesRows,
  measuredBake,
  meetsBakeTarget,
} from '../../bench/models/bake-simulation.ts';
import { BAKE_DEADLINE_MS } from '../../lambdas/hooks/bake.ts';
import { measureReleases, meetsReleaseTarget } from '../../bench/models/release-simulation.ts';

// Measured once per process: the whole-release rows below reuse it.
const measured = measuredBake();

it(`plays at least 2,000 deploys a case (${DEPLOYS_PER_CASE})`, () => {
  expect(DEPLOYS_PER_CASE).toBeGreaterThanOrEqual(2_000);
  expect(measured.map((m) => m.case)).toEqual(BAKE_CASES);
});

describe.each(measured.map((m) => [m.case.what, m] as const))('%s', (_what, m) => {
  it(m.case.target ? 'meets its target' : 'is reported, and is beyond the deadline', () => {
    // Printed, so a run shows the rates the docs state.
    console.log(`${m.case.release}: ${m.case.what}: rolled back ${(100 * m.rolledBack).toFixed(2)} %`);
    if (m.case.target) expect(meetsBakeTarget(m.case, m.rolledBack)).toBe(true);
    else expect(m.rolledBack).toBeLessThan(0.99);
    expect(m.p95Minutes).toBeLessThanOrEqual(BAKE_DEADLINE_MS / 60_000);
  });
});

it('the issue’s case: a createPet failing 5 % at 10 req/min is stopped in at least 99 % of deploys', () => {
  const bad = measured.find(
    (m) => m.case.release === 'bad' && m.case.perMinute === 10 && m.case.oldFails === 0.001 && !m.case.baselineMinutes,
  );
  expect(bad!.case.newFails).toBeCloseTo(0.051);
  expect(bad!.rolledBack).toBeGreaterThanOrEqual(0.99);
});

it('the rows the docs render say met for every case held to the target', () => {
  const rows = bakeRatesRows(measured);
  expect(rows.filter((r) => r.target === 'NOT met')).toEqual([]);
  expect(rows.filter((r) => r.target === 'beyond the deadline').map((r) => r.case)).toEqual([
    'the new version fails 5.1 %, the previous one 0.1 %, 1 req/min',
  ]);
});

it('judges the flood against the previous version in the canary, where it falls on both versions alike', () => {
  const flood = measured.filter((m) => m.case.flood);
  expect(flood.map((m) => [m.case.release, meetsBakeTarget(m.case, m.rolledBack)])).toEqual([
    ['good', true],
    ['bad', true],
  ]);
  // Decided on the canary's counts, at the first look after the shift.
  for (const m of flood) expect(m.p95Minutes).toBe(0);
});

it('adds about 20 minutes to a release of a write at 10 req/min, nothing from 1,000, the deadline at 1', () => {
  expect(BAKE_ADDED_MINUTES).toEqual({ '1 req/min': 50, '10 req/min': 20, '100 req/min': 4, '1,000 req/min': 0 });
  // The measured medians agree within a minute or two (the canary starts at a random point of a minute).
  for (const m of measured.filter(
    (x) => x.case.release === 'good' && !x.case.baselineMinutes && !x.case.flood && !x.case.burst,
  )) {
    const expected = bakeAddedMinutes(m.case.perMinute, m.case.oldFails);
    expect(Math.abs(m.medianMinutes - expected)).toBeLessThanOrEqual(2);
  }
});

// Whole releases (bench/models/release-simulation.ts): the check, the gates and the bake of all five functions at once.
describe('a release of every function, each part played', () => {
  const releases = measureReleases();
  it.each(releases.map((r) => [r.case.what, r] as const))('%s meets its target', (_what, r) => {
    expect(meetsReleaseTarget(r), `${r.case.release}: ${(100 * r.rate).toFixed(2)} %`).toBe(true);
  });
});
