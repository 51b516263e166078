/**
 * Whole releases: a release of every function is rolled back when any of its checks says so. For each function
 * that is its pre-traffic check (pre-traffic-judge.ts), its canary gate (gate-simulation.ts) and, for a write, the
 * bake (bake-simulation.ts). Each part judges its own requests, so a release's rate is one minus the product of
 * each part letting it through. test/unit/bake-simulation.test.ts asserts the targets.
 */
import { ROUTES, writes } from '../../contract/routes.ts';
import { CREATE_TRIES } from '../../lambdas/hooks/pre-traffic-check.ts';
import { REQUESTS_PER_VERSION, judgeRun, randomAnswer } from '../../lambdas/hooks/pre-traffic-judge.ts';
import { type BakeCase, BAKE_CASES, measuredBake } from './bake-simulation.ts';
import { GATE_CASES, type GateCase, measureCase } from './gate-simulation.ts';
import { random } from './sampling.ts';

/** What a release meets while it deploys, and where each part's rate comes from. */
export interface ReleaseCase {
  readonly release: 'good' | 'bad';
  readonly what: string;
  /** The share of the check's requests both versions fail (a flood's 503s reach the check's key too). */
  readonly checkFails: number;
  /** The share of the check's create requests the new version fails. @default checkFails */
  readonly createFails?: number;
  /** The gate case of each operation's canary, and of the authorizer's. */
  readonly operation: (c: GateCase) => boolean;
  readonly authorizer: (c: GateCase) => boolean;
  /** The bake case of each write. */
  readonly bake: (c: BakeCase) => boolean;
}

const what = (text: string) => (c: { readonly what: string }) => c.what === text;
const startsWith = (text: string) => (c: { readonly what: string }) => c.what.startsWith(text);

export const RELEASE_CASES: readonly ReleaseCase[] = [
  ...[0.001, 0.01].flatMap((p) =>
    [10, 1_000].map((r): ReleaseCase => ({
      release: 'good',
      what: `${100 * p} % background failures on every function, ${r.toLocaleString('en-US')} req/min each`,
      checkFails: p,
      operation: what(
        `${100 * p} % background failures on both versions (the check’s requests too), ${r.toLocaleString('en-US')} req/min`,
      ),
      authorizer: what(
        `${100 * p} % of key lookups failing on both versions, ${(r === 10 ? 100 : 1_000).toLocaleString('en-US')} cache misses/min`,
      ),
      bake: what(`both versions fail ${100 * p} %, ${r.toLocaleString('en-US')} req/min`),
    })),
  ),
  {
    release: 'good',
    what: 'a customer flood on every function (30,000 req/min, 2 % Lambda errors and 5 % 503s), its 503s reaching the check’s key too',
    checkFails: 0.07,
    operation: startsWith('a customer flood failing on both versions'),
    authorizer: startsWith('a flood of forged tokens'),
    bake: startsWith('a customer flood failing on both versions'),
  },
  {
    release: 'good',
    what: 'an outsider’s bucket-timed bursts: 300 known-500s (one Pro key’s minute) at every function at the end of the bucket the shift starts in, 1,000 req/min each',
    checkFails: 0.001,
    operation: startsWith(
      'an outsider sends 300 requests both versions answer 500 (one Pro key’s minute) all at once, at the end of the bucket the shift starts in, beside 1,000 req/min',
    ),
    authorizer: startsWith('an outsider sends 300 tokens'),
    bake: startsWith(
      'an outsider sends 300 requests both versions answer 500 (one Pro key’s minute) all at once, in the canary',
    ),
  },
  {
    release: 'bad',
    what: 'createPet fails 5.1 % of its requests (0.1 % before), 10 req/min',
    checkFails: 0.001,
    createFails: 0.051,
    operation: what('the new version fails 5 % of its requests (0.1 % on both), 10 req/min'),
    authorizer: () => false,
    bake: what('the new version fails 5.1 %, the previous one 0.1 %, 10 req/min'),
  },
];

/** Hook runs played per case for the check's part. */
export const CHECK_RUNS = 4_000;

/** The share of a check's runs that fail a version failing as the live one does (any verdict but not-worse). */
function checkFailed(p: number, seed: number): number {
  const rng = random(seed);
  let failed = 0;
  for (let i = 0; i < CHECK_RUNS; i++)
    if (
      judgeRun(REQUESTS_PER_VERSION, () => [randomAnswer({ fails: p }, rng), randomAnswer({ fails: p }, rng)]) !==
      'not-worse'
    )
      failed++;
  return failed / CHECK_RUNS;
}

const only = <T extends { readonly what: string }>(cases: readonly T[], pick: (c: T) => boolean, of: string): T => {
  const found = cases.filter(pick);
  if (found.length !== 1) throw new Error(`${of}: ${found.length} cases match, not one`);
  return found[0]!;
};

export interface ReleaseMeasure {
  readonly case: ReleaseCase;
  /** A good release: the share rolled back; a bad one: the share stopped. */
  readonly rate: number;
}

/** Each release case's rate, from its parts. */
export function measureReleases(): ReleaseMeasure[] {
  const bakes = measuredBake();
  const bakeRate = (c: BakeCase) => bakes.find((b) => b.case === c)!.rolledBack;
  const reads = ROUTES.filter((r) => !writes(r)).length;
  const creates = ROUTES.filter(writes).length;
  return RELEASE_CASES.map((c, i) => {
    const op = only(GATE_CASES, c.operation, `${c.what}: operation gate`);
    const bake = only(BAKE_CASES, c.bake, `${c.what}: bake`);
    const createFails = c.createFails ?? c.checkFails;
    if (c.release === 'bad') {
      // Only the write is bad: its check's tries, its gate and its bake each may stop it.
      const passes = (1 - createFails ** CREATE_TRIES) * (1 - measureCase(op)) * (1 - bakeRate(bake));
      return { case: c, rate: 1 - passes };
    }
    const auth = only(GATE_CASES, c.authorizer, `${c.what}: authorizer gate`);
    const check = checkFailed(c.checkFails, 9_000 + i);
    const passes =
      (1 - check) ** (reads + 1) *
      (1 - createFails ** CREATE_TRIES) ** creates *
      (1 - measureCase(op)) ** ROUTES.length *
      (1 - measureCase(auth)) *
      (1 - bakeRate(bake)) ** creates;
    return { case: c, rate: 1 - passes };
  });
}

/** The targets: a good release rolled back in at most 1 %, a bad one stopped in at least 99 %. */
export const meetsReleaseTarget = (m: ReleaseMeasure): boolean =>
  m.case.release === 'good' ? m.rate <= 0.01 : m.rate >= 0.99;

let measured: ReleaseMeasure[] | undefined;

/** The docs' release-rates table: a row per release case (measured once per process). */
export function releaseRatesTable(): string {
  measured ??= measureReleases();
  return [
    `| Release of all ${ROUTES.length + 1} functions | What it meets | Measured | Target (good ≤ 1 % rolled back, bad ≥ 99 % stopped) |`,
    '|---|---|---|---|',
    ...measured.map(
      (m) =>
        `| ${m.case.release} | ${m.case.what} | ${m.case.release === 'good' ? 'rolled back' : 'stopped'} in ${(100 * m.rate).toFixed(2)} % | ${meetsReleaseTarget(m) ? 'met' : 'NOT met'} |`,
    ),
  ].join('\n');
}
