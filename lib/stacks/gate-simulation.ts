/**
 * The deploy gates' error rates, measured by playing canaries as CodeDeploy and CloudWatch run them rather than
 * checked on one hand-picked minute: requests arrive at random (Poisson), each request of the canary goes to the
 * new version with probability 0.1 (Lambda's weighted alias picks per invocation), each fails at random with its
 * version's probability, and CloudWatch sums each version's counts over the gate's period in buckets aligned to the
 * clock, not to the deploy (the canary starts at a random point of a bucket). Besides steady traffic, a case may
 * send a burst all at once (at the end of the bucket the shift starts in, where it stands out most) and hold the
 * pre-traffic check's direct invocations before the shift. Seeded: a run gives the same rates.
 *
 * `gateExcess` is the gates' formula (lib/constructs/version-gates.ts) in TypeScript; test/infra/gate-simulation.test.ts
 * proves it equal to the synthesized alarms' own metric math, plays that math on the same canaries and asserts the
 * targets. `npm run openapi` writes the measured rates into docs/deployment.md ("Gradual deploys"). Plain code, no
 * CDK imports.
 *
 * The sampling is exact (inversion, searched outwards from the mode, so a large count costs about one standard
 * deviation of steps): a normal approximation would misstate exactly the tails a gate's false rollbacks live in.
 */
import { ROUTES } from '../../contract/routes.ts';
import { REQUESTS_PER_VERSION } from '../../lambdas/hooks/pre-traffic-judge.ts';
import { CLOUDWATCH_LAG_SECONDS, GATE_MARGIN_SECONDS } from '../preflight/canary-timing.ts';

/** The gates' period: one bucket of the canary, the longest that can still fire inside it (version-gates.ts). */
export const GATE_PERIOD_SECONDS = 180;
/**
 * Standard deviations above the expected count (a one-sided normal bound on the binomial). 4 rather than 3.5: a
 * release rolls back when any of its functions' gates fires, so the false rollbacks of five gates add up; at 4 the
 * worst case of every gate at once stays under 1 %, and every failing version a canary can show is still caught.
 */
export const GATE_SIGMAS = 4;
/** Failures above the bound the gate needs (its alarm threshold): a continuity correction for small counts. */
export const GATE_MARGIN = 0.5;
/** The new version's failures in the period below which nothing is judged. */
export const GATE_MIN_FAILURES = 3;
/**
 * How far below the canary's weight the share the bound uses may fall, in standard deviations of the share routing
 * alone gives a bucket of N invocations (sqrt(weight (1 - weight) / N)). In a bucket the shift ran through, a share
 * below the weight is routing's chance, and the failures followed the invocations: flooring it at the weight itself
 * left a version denying every valid key at 30 cache misses a minute undetected in 6 % of canaries. Where a bucket's
 * share is below the weight because the old version ran alone before the shift, N is what diluted it, so the floor
 * stays near the weight exactly where a burst timed to that bucket needs it.
 */
export const GATE_FLOOR_SIGMAS = 2;

/** mulberry32: a small seeded generator, uniform on [0, 1). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7: about 15 significant digits). */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < 9; i++) s += LANCZOS[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(s);
}

/**
 * Inversion over the outcomes enumerated outwards from the mode (any fixed order of the outcomes is a valid
 * inversion): `up(k, pk)` and `down(k, pk)` give the probability of k + 1 and k - 1 from that of k.
 */
function fromMode(
  u: number,
  mode: number,
  pMode: number,
  min: number,
  max: number,
  up: (k: number, pk: number) => number,
  down: (k: number, pk: number) => number,
): number {
  u -= pMode;
  if (u <= 0) return mode;
  let lo = mode;
  let hi = mode;
  let pLo = pMode;
  let pHi = pMode;
  for (;;) {
    const canUp = hi < max;
    const canDown = lo > min;
    if (!canUp && !canDown) return mode;
    if (canUp) {
      pHi = up(hi, pHi);
      hi++;
      u -= pHi;
      if (u <= 0) return hi;
    }
    if (canDown) {
      pLo = down(lo, pLo);
      lo--;
      u -= pLo;
      if (u <= 0) return lo;
    }
    // What is left is below the floating-point resolution of the probabilities summed so far.
    if (pHi < 1e-300 && pLo < 1e-300) return mode;
  }
}

export function binomial(rng: () => number, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  const mode = Math.min(n, Math.floor((n + 1) * p));
  const lnP =
    lnGamma(n + 1) - lnGamma(mode + 1) - lnGamma(n - mode + 1) + mode * Math.log(p) + (n - mode) * Math.log1p(-p);
  const odds = p / (1 - p);
  return fromMode(
    rng(),
    mode,
    Math.exp(lnP),
    0,
    n,
    (k, pk) => (pk * (n - k) * odds) / (k + 1),
    (k, pk) => (pk * k) / ((n - k + 1) * odds),
  );
}

export function poisson(rng: () => number, mean: number): number {
  if (mean <= 0) return 0;
  const mode = Math.floor(mean);
  const lnP = mode * Math.log(mean) - mean - lnGamma(mode + 1);
  return fromMode(
    rng(),
    mode,
    Math.exp(lnP),
    0,
    Number.POSITIVE_INFINITY,
    (k, pk) => (pk * mean) / (k + 1),
    (k, pk) => (pk * k) / mean,
  );
}

/** A kind of request a canary sees: how many a minute, and the share each version fails. */
export interface Traffic {
  readonly perMinute: number;
  readonly oldFails: number;
  readonly newFails: number;
  /**
   * How a failure shows: a Lambda error (a crash or timeout; the authorizer's denials and failures, which throw) or
   * a 5xx the function answered itself, its `ServerError` count.
   * @default 'ServerError'
   */
  readonly shows?: 'Errors' | 'ServerError';
}

/** What CloudWatch holds for one bucket of the gate's period: each count of the alias and of its new version. */
export interface Bucket {
  readonly allInvocations: number;
  readonly newInvocations: number;
  readonly allErrors: number;
  readonly newErrors: number;
  readonly allServerErrors: number;
  readonly newServerErrors: number;
}

/**
 * The gates' formula: how far the new version's failures f are above the bound on what it would have had failing
 * at the alias's rate. Of the alias's F failures, each fell on the new version with its share w of the invocations
 * if both versions fail alike, so f is binomial (F, w); the bound is its mean plus GATE_SIGMAS standard deviations.
 * w is at least the canary's `weight`, less GATE_FLOOR_SIGMAS of routing's noise: in the bucket the shift starts
 * in, the old version's traffic before the shift dilutes the new version's share, while requests sent all at once
 * late in that bucket (an outsider's known 500s) land on the new version at the canary's weight. 0 (not judged)
 * while the old version ran nothing or the new one failed fewer than GATE_MIN_FAILURES times. The gate fires at
 * GATE_MARGIN or more.
 */
export function gateExcess(b: Bucket, weight: number = DEPLOY.weight): number {
  const n = b.newInvocations;
  const N = b.allInvocations;
  const f = b.newErrors + b.newServerErrors;
  const F = b.allErrors + b.allServerErrors;
  if (!(N - n > 0 && f >= GATE_MIN_FAILURES)) return 0;
  const w = Math.max(n / N, weight - GATE_FLOOR_SIGMAS * Math.sqrt((weight * (1 - weight)) / N));
  return f - w * F - GATE_SIGMAS * Math.sqrt(F * w * (1 - w));
}

export interface Deploy {
  /** CodeDeploy's canary: the new version's weight, and how long it serves it before it takes everything. */
  readonly weight: number;
  readonly canarySeconds: number;
  /** The alarm's period. */
  readonly periodSeconds: number;
  /**
   * How long after a bucket ends its datapoint has surely moved the alarm (CloudWatch's delay and a margin: a
   * bucket that ends later than this before the shift completes may be judged too late).
   */
  readonly judgedWithinSeconds: number;
}

/**
 * Both stages' canary (CodeDeployDefault.LambdaCanary10Percent10Minutes) and the gates' period; a bucket is surely
 * judged when CloudWatch's delay and a margin (lib/preflight/canary-timing.ts: 120 s + 60 s) fit before the shift.
 */
export const DEPLOY: Deploy = {
  weight: 0.1,
  canarySeconds: 600,
  periodSeconds: GATE_PERIOD_SECONDS,
  judgedWithinSeconds: CLOUDWATCH_LAG_SECONDS + GATE_MARGIN_SECONDS,
};

/**
 * Requests sent all at once at the end of the bucket the shift starts in: an outsider who times a burst to the
 * bucket in which the old version's traffic before the shift dilutes the new version's share. Routed as the canary
 * routes every request.
 */
export interface Burst {
  readonly requests: number;
  readonly oldFails: number;
  readonly newFails: number;
  readonly shows?: Traffic['shows'];
}

/**
 * The pre-traffic check: its direct invocations of each version (by number, never through the alias), spread over
 * the `seconds` before the shift starts, each failing with the share both versions fail the check's key (a flood's
 * 503s reach it too). Lambda counts them under the version's qualifier only, never under the alias the gates read;
 * the functions count a 5xx under the gates' dimensions only for an invocation through the alias, so they enter no
 * gate. `checkCounted` plays what the functions did before: every 5xx counted per version and per operation, the
 * check's included, while the alias's invocations gave the new version no share before the shift.
 */
export interface Check {
  readonly perVersion: number;
  readonly fails: number;
  readonly seconds: number;
}

/** What a canary is played on: steady traffic, and optionally a timed burst and the pre-traffic check. */
export interface Scenario {
  readonly traffic: readonly Traffic[];
  readonly burst?: Burst;
  readonly check?: Check;
}

export interface PlayOptions {
  /** Whether the check's 5xx enter the gates' ServerError counts (the functions before they told the alias apart). */
  readonly checkCounted?: boolean;
}

export interface Canary {
  /** Every bucket that ended while the deploy ran: any of them may roll a release back. */
  readonly buckets: readonly Bucket[];
  /** How many of them (from the first) CloudWatch surely judged before the shift ended. */
  readonly judged: number;
}

const emptyBucket = () => ({
  allInvocations: 0,
  newInvocations: 0,
  allErrors: 0,
  newErrors: 0,
  allServerErrors: 0,
  newServerErrors: 0,
});

type Counts = ReturnType<typeof emptyBucket>;

/** `toOld` and `toNew` requests of a kind, each failing at its version's share, added to the bucket. */
function serve(rng: () => number, b: Counts, t: Omit<Traffic, 'perMinute'>, toOld: number, toNew: number): void {
  const newFailed = binomial(rng, toNew, t.newFails);
  const oldFailed = binomial(rng, toOld, t.oldFails);
  b.allInvocations += toOld + toNew;
  b.newInvocations += toNew;
  if ((t.shows ?? 'ServerError') === 'Errors') {
    b.allErrors += oldFailed + newFailed;
    b.newErrors += newFailed;
  } else {
    b.allServerErrors += oldFailed + newFailed;
    b.newServerErrors += newFailed;
  }
}

/**
 * One deploy: buckets aligned to the clock, the shift starting at a random point of the first. With `checkCounted`,
 * the buckets before the shift that the check's invocations fall in come first: nothing else can fire them (the new
 * version runs nothing through the alias before the shift), so they are played only then.
 */
export function playCanary(
  rng: () => number,
  deploy: Deploy,
  { traffic, burst, check }: Scenario,
  options: PlayOptions = {},
): Canary {
  const { periodSeconds: period, canarySeconds: canary, weight } = deploy;
  const start = -rng() * period;
  const counted = options.checkCounted && check ? check : undefined;
  const buckets: Bucket[] = [];
  let judged = 0;
  let from = start;
  if (counted) while (from > -counted.seconds) from -= period;
  for (; from + period <= canary; from += period) {
    const before = Math.max(0, Math.min(period, -from));
    const during = period - before;
    const b = emptyBucket();
    for (const t of traffic) {
      // Before the shift: the old version alone. During it: each request routed at random.
      const early = poisson(rng, (t.perMinute * before) / 60);
      const routed = poisson(rng, (t.perMinute * during) / 60);
      const toNew = binomial(rng, routed, weight);
      serve(rng, b, t, early + routed - toNew, toNew);
    }
    // The burst lands at the end of the shift's bucket, after the shift started.
    if (burst && from <= 0 && from > -period) {
      const toNew = binomial(rng, burst.requests, weight);
      serve(rng, b, burst, burst.requests - toNew, toNew);
    }
    if (counted) {
      // The part of the check's seconds that falls in this bucket; its 5xx counted as the alias's would be.
      const overlap = Math.max(0, Math.min(from + period, 0) - Math.max(from, -counted.seconds));
      const share = (counted.perVersion * overlap) / counted.seconds;
      const onNew = binomial(rng, poisson(rng, share), counted.fails);
      const onOld = binomial(rng, poisson(rng, share), counted.fails);
      b.newServerErrors += onNew;
      b.allServerErrors += onNew + onOld;
    }
    buckets.push(b);
    if (from + period + deploy.judgedWithinSeconds <= canary) judged = buckets.length;
  }
  return { buckets, judged };
}

/**
 * The share of `canaries` deploys a gate rolls back: for a good release any bucket that ended during the deploy
 * counts (the most it could do), for a bad one only the buckets surely judged in time (the least).
 */
export function rollbackRate(
  seed: number,
  canaries: number,
  scenario: Scenario,
  trips: (b: Bucket) => boolean,
  release: 'good' | 'bad',
  deploy: Deploy = DEPLOY,
  options: PlayOptions = {},
): number {
  const rng = random(seed);
  let rolledBack = 0;
  for (let i = 0; i < canaries; i++) {
    const c = playCanary(rng, deploy, scenario, options);
    const watched = release === 'good' ? c.buckets : c.buckets.slice(0, c.judged);
    if (watched.some(trips)) rolledBack++;
  }
  return rolledBack / canaries;
}

/** A case the gates are played on. */
export interface GateCase extends Scenario {
  readonly gate: 'operation' | 'authorizer';
  /** A good release must not be rolled back (at most 1 %); a bad one must (at least 99 %). */
  readonly release: 'good' | 'bad';
  readonly what: string;
  /**
   * Held to the target. A bad release below this is beyond what a 10 % canary shows: at 10 requests a minute the
   * new version serves about 10 requests in the whole canary, and a version failing 5 % of them fails none in
   * 0.95^10 = 60 % of canaries, which no gate on the canary's traffic can tell from a good one.
   */
  readonly target: boolean;
}

const fails = (perMinute: number, oldFails: number, newFails = oldFails, shows?: Traffic['shows']): Traffic => ({
  perMinute,
  oldFails,
  newFails,
  ...(shows ? { shows } : {}),
});
const n = (x: number) => x.toLocaleString('en-US');
/**
 * A read operation's pre-traffic check (docs/deployment.md, "Gradual deploys"): REQUESTS_PER_VERSION invocations of
 * each version, paced over about 3.5 minutes on a Business key, failing as the operation's traffic does.
 */
const readCheck = (fails: number): Check => ({ perVersion: REQUESTS_PER_VERSION, fails, seconds: 200 });

/** The cases: the issue's and the suites' floods, noise and outsiders for good releases; failing versions for bad ones. */
export const GATE_CASES: readonly GateCase[] = [
  {
    gate: 'operation',
    release: 'good',
    what: 'a customer flood failing on both versions (30,000 req/min, 2 % Lambda errors and 5 % 503s), its 503s reaching the check’s key too',
    traffic: [fails(30_000, 0.02, 0.02, 'Errors'), fails(30_000, 0.05)],
    check: readCheck(0.07),
    target: true,
  },
  ...[0.001, 0.01].flatMap((p) =>
    [10, 100, 1_000, 10_000].map((r): GateCase => ({
      gate: 'operation',
      release: 'good',
      what: `${100 * p} % background failures on both versions (the check’s requests too), ${n(r)} req/min`,
      traffic: [fails(r, p)],
      check: readCheck(p),
      target: true,
    })),
  ),
  ...[1, 5].flatMap((o) =>
    [10, 100, 1_000, 10_000].map((r): GateCase => ({
      gate: 'operation',
      release: 'good',
      what: `an outsider sends a request both versions answer 500, ${o === 1 ? 'once' : `${o} times`} a minute, beside ${n(r)} req/min`,
      traffic: [fails(r, 0), fails(o, 1)],
      target: true,
    })),
  ),
  ...[1_000, 10_000].map((r): GateCase => ({
    gate: 'operation',
    release: 'good',
    what: `an outsider sends 300 requests both versions answer 500 (one Pro key’s minute) all at once, at the end of the bucket the shift starts in, beside ${n(r)} req/min (0.1 % failing)`,
    traffic: [fails(r, 0.001)],
    burst: { requests: 300, oldFails: 1, newFails: 1 },
    target: true,
  })),
  ...[10, 100, 300, 1_000, 10_000].map((r): GateCase => ({
    gate: 'operation',
    release: 'bad',
    what: `the new version fails 5 % of its requests (0.1 % on both), ${n(r)} req/min`,
    traffic: [fails(r, 0.001, 0.051)],
    target: r >= 1_000,
  })),
  {
    gate: 'operation',
    release: 'bad',
    what: 'the new version fails 5 % of its requests during the customer flood above',
    traffic: [fails(30_000, 0.02, 0.02, 'Errors'), fails(30_000, 0.05, 0.1)],
    target: true,
  },
  ...[10, 20, 30, 100].map((r): GateCase => ({
    gate: 'operation',
    release: 'bad',
    what: `the new version answers 503 to every request, ${n(r)} req/min`,
    traffic: [fails(r, 0, 1)],
    target: r >= 30,
  })),
  {
    gate: 'operation',
    release: 'bad',
    what: 'the new version crashes on every request (a Lambda error, the gateway’s 502), 30 req/min',
    traffic: [fails(30, 0, 1, 'Errors')],
    target: true,
  },
  {
    gate: 'authorizer',
    release: 'good',
    what: 'a flood of forged tokens (30,000/min) beside 2,000 valid-key cache misses/min',
    traffic: [fails(30_000, 1, 1, 'Errors'), fails(2_000, 0, 0, 'Errors')],
    target: true,
  },
  ...[0.001, 0.01].flatMap((p) =>
    [100, 1_000].map((r): GateCase => ({
      gate: 'authorizer',
      release: 'good',
      what: `${100 * p} % of key lookups failing on both versions, ${n(r)} cache misses/min`,
      traffic: [fails(r, p, p, 'Errors')],
      target: true,
    })),
  ),
  {
    gate: 'authorizer',
    release: 'good',
    what: 'an outsider sends 300 tokens both versions fail on all at once, at the end of the bucket the shift starts in, beside 1,000 cache misses/min',
    traffic: [fails(1_000, 0.001, 0.001, 'Errors')],
    burst: { requests: 300, oldFails: 1, newFails: 1, shows: 'Errors' },
    target: true,
  },
  ...[1, 5].flatMap((o) =>
    [10, 100, 1_000].map((r): GateCase => ({
      gate: 'authorizer',
      release: 'good',
      what: `an outsider sends a token both versions fail on, ${o === 1 ? 'once' : `${o} times`} a minute, beside ${n(r)} cache misses/min`,
      traffic: [fails(r, 0, 0, 'Errors'), fails(o, 1, 1, 'Errors')],
      target: true,
    })),
  ),
  ...[10, 30, 100, 1_000].map((r): GateCase => ({
    gate: 'authorizer',
    release: 'bad',
    what: `the new version denies every valid key, ${n(r)} valid-key cache misses/min (and 10 % forged)`,
    traffic: [fails(r, 0, 1, 'Errors'), fails(r / 10, 1, 1, 'Errors')],
    target: r >= 30,
  })),
  {
    gate: 'authorizer',
    release: 'bad',
    what: 'the new version denies every valid key during the forged-token flood above',
    traffic: [fails(2_000, 0, 1, 'Errors'), fails(30_000, 1, 1, 'Errors')],
    target: true,
  },
  {
    gate: 'authorizer',
    release: 'bad',
    what: 'the new version fails half its key lookups, 100 cache misses/min',
    traffic: [fails(100, 0, 0.5, 'Errors')],
    target: true,
  },
];

/** Canaries played per case: a rate of 1 % is measured to about 0.1 point (one standard error). */
export const CANARIES_PER_CASE = 10_000;

/** The targets: a good release rolled back in at most 1 % of canaries, a bad one in at least 99 %. */
export const meetsTarget = (c: GateCase, rolledBack: number): boolean =>
  c.release === 'good' ? rolledBack <= 0.01 : rolledBack >= 0.99;

/**
 * One case's rollback rate for a gate (by default the formula above): the probability that a single function's gate
 * rolls the case's deploy back. Seeded by the case's place in GATE_CASES unless given a seed (a case of the caller's).
 */
export function measureCase(
  c: GateCase,
  excess: (b: Bucket) => number = gateExcess,
  options: PlayOptions & { readonly canaries?: number; readonly seed?: number } = {},
): number {
  return rollbackRate(
    options.seed ?? 1_000 + GATE_CASES.indexOf(c),
    options.canaries ?? CANARIES_PER_CASE,
    c,
    (b) => excess(b) >= GATE_MARGIN,
    c.release,
    DEPLOY,
    options,
  );
}

/** Each case's rollback rate for a gate (by default the formula above), of one kind of gate or of both. */
export function measureGates(
  excess: (b: Bucket) => number = gateExcess,
  gate?: GateCase['gate'],
  options: PlayOptions = {},
): { case: GateCase; rolledBack: number }[] {
  return GATE_CASES.filter((c) => !gate || c.gate === gate).map((c) => ({
    case: c,
    rolledBack: measureCase(c, excess, options),
  }));
}

/** Two decimals: 10,000 canaries a case resolve 0.01 %. */
const percent = (x: number) => `${(100 * x).toFixed(2)} %`;

let measured: ReturnType<typeof measureGates> | undefined;

/** docs/deployment.md, "Gradual deploys": the measured rates, a row per case (measured once per process). */
export function gateRatesTable(): string {
  measured ??= measureGates();
  const rows = measured.map(({ case: c, rolledBack }) => {
    const rate =
      c.release === 'good' ? `rolled back in ${percent(rolledBack)}` : `missed in ${percent(1 - rolledBack)}`;
    const verdict = !c.target ? 'beyond a canary (see below)' : meetsTarget(c, rolledBack) ? 'met' : 'NOT met';
    return `| ${c.gate} | ${c.release} | ${c.what} | ${rate} | ${verdict} |`;
  });
  const release = releaseFalseRollback(measured);
  return [
    '| Gate | Release | Canary traffic | Measured | Target (good ≤ 1 % rolled back, bad ≤ 1 % missed) |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `A release that changes all ${release.functions} functions, with every gate at its worst good case at once: rolled back in ${percent(release.rolledBack)}.`,
  ].join('\n');
}

/**
 * A release rolls back when any of its functions' gates fires: the share of releases rolled back when every
 * operation's gate and the authorizer's meet their worst good case at once (each judges its own function's traffic,
 * so their trips are independent).
 */
export function releaseFalseRollback(rates: ReturnType<typeof measureGates>): {
  functions: number;
  rolledBack: number;
} {
  const worst = (gate: GateCase['gate']) =>
    Math.max(...rates.filter((r) => r.case.gate === gate && r.case.release === 'good').map((r) => r.rolledBack));
  const operations = ROUTES.length;
  return {
    functions: operations + 1,
    rolledBack: 1 - (1 - worst('operation')) ** operations * (1 - worst('authorizer')),
  };
}
