/**
 * The deploy gates' rates, measured on simulated canaries: Poisson arrivals, each canary request routed to the new
 * version with the canary's weight, failures drawn per version, counts summed in clock-aligned buckets (the shift
 * starts at a random point of one). A case may add a burst timed to the shift's bucket, or the pre-traffic check's
 * invocations. `gateExcess` is the gates' formula (lib/constructs/version-gates.ts) in TypeScript;
 * test/infra/gate-simulation.test.ts proves it equal to the synthesized alarms' math and asserts the targets.
 */
import { ROUTES } from '../../contract/routes.ts';
import { REQUESTS_PER_VERSION } from '../../lambdas/hooks/pre-traffic-judge.ts';
import {
  GATE_FLOOR_SIGMAS,
  GATE_MARGIN,
  GATE_MIN_FAILURES,
  GATE_PERIOD_SECONDS,
  GATE_SIGMAS,
} from '../../lib/config/deploy-gates.ts';
import { CLOUDWATCH_LAG_SECONDS, GATE_MARGIN_SECONDS } from '../../lib/preflight/canary-timing.ts';
import { binomial, poisson, random } from './sampling.ts';

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
 * The gates' formula (version-gates.ts says why): how far the new version's failures are above the binomial bound
 * for its share of the invocations, floored near the canary's weight. 0 when nothing is judged; fires at GATE_MARGIN.
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
  /** How long after a bucket ends its datapoint has surely moved the alarm (CloudWatch's delay and a margin). */
  readonly judgedWithinSeconds: number;
}

/** Both stages' canary (CodeDeployDefault.LambdaCanary10Percent10Minutes) and the gates' period. */
export const DEPLOY: Deploy = {
  weight: 0.1,
  canarySeconds: 600,
  periodSeconds: GATE_PERIOD_SECONDS,
  judgedWithinSeconds: CLOUDWATCH_LAG_SECONDS + GATE_MARGIN_SECONDS,
};

/**
 * Requests sent all at once at the end of the bucket the shift starts in, where the old version's traffic before
 * the shift dilutes the new version's share most. Routed as the canary routes every request.
 */
export interface Burst {
  readonly requests: number;
  readonly oldFails: number;
  readonly newFails: number;
  readonly shows?: Traffic['shows'];
}

/**
 * The pre-traffic check: its direct invocations of each version over the `seconds` before the shift. They enter no
 * gate (they do not go through the alias); `checkCounted` plays them counted as the alias's 5xx, to show why not.
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
  /** Whether the check's 5xx enter the gates' ServerError counts. */
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
 * the buckets before the shift that hold the check's invocations come first.
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
   * Held to the target. Not for a bad release a 10 % canary cannot show: at 10 requests a minute the new version
   * serves about 10 in the whole canary, and one failing 5 % fails none in 60 % of canaries.
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
/** A read operation's pre-traffic check: REQUESTS_PER_VERSION invocations of each version over about 3.5 minutes. */
const readCheck = (fails: number): Check => ({ perVersion: REQUESTS_PER_VERSION, fails, seconds: 200 });

/** The cases: floods, noise and outsiders for good releases; failing versions for bad ones. */
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
 * The share of the case's deploys a single function's gate (by default the formula above) rolls back. Seeded by the
 * case's place in GATE_CASES unless given a seed.
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

/** The docs' gate-rates table: the measured rates, a row per case (measured once per process). */
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
 * The share of releases rolled back when every function's gate meets its worst good case at once: any gate firing
 * rolls the release back, and each judges its own function's traffic, so their trips are independent.
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
