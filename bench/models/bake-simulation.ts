/**
 * The bake's rates (lambdas/hooks/bake.ts), measured on simulated deploys of a write: the previous version's day,
 * the pre-traffic minute, the canary (starting at a random point of a minute), then every request to the new
 * version. The hook's own decision (canaryWindow, judgeLook) runs at each look on per-minute counts read
 * METRICS_LAG_MS late. A case may add a flood from the deploy's start or a burst of known-500s.
 * test/unit/bake-simulation.test.ts asserts the targets.
 */
import {
  BAKE_DEADLINE_MS,
  BAKE_EXCESS,
  BAKE_LOOK_EVERY_MS,
  METRICS_LAG_MS,
  SHIFT_SLACK_MS,
  canaryWindow,
  judgeLook,
  requestsNeeded,
  type MinuteCounts,
  type VersionCounts,
} from '../../lambdas/hooks/bake.ts';
import { DEPLOY } from './gate-simulation.ts';
import { binomial, poisson, random } from './sampling.ts';

const MINUTE = 60_000;
/** The previous version's day, in minutes (lambdas/hooks/bake.ts BASELINE_MS). */
const BASELINE_MINUTES = 24 * 60;
const LOOK_MINUTES = BAKE_LOOK_EVERY_MS / MINUTE;
const DEADLINE_MINUTES = BAKE_DEADLINE_MS / MINUTE;
const LAG_MINUTES = METRICS_LAG_MS / MINUTE;
/** From the deployment's creation to the canary's start: the pre-traffic check (at least this long). */
const PRE_TRAFFIC_MINUTES = 1;
/** The most CodeDeploy takes, in the simulation, from the shift to the hook's start (lambdas/hooks/bake.ts SHIFT_SLACK_MS). */
const HOOK_DELAY_MINUTES = 0.25;

/** Requests of one kind, each failing with its version's share. */
export interface BakeTraffic {
  readonly perMinute: number;
  readonly oldFails: number;
  readonly newFails: number;
}

/** A case of write traffic during a release. */
export interface BakeCase {
  readonly release: 'good' | 'bad';
  readonly what: string;
  readonly perMinute: number;
  /** The share of its requests each version fails (a 5xx it answered, or a Lambda error). */
  readonly oldFails: number;
  readonly newFails: number;
  /** Minutes the function served through `live` before the deployment (at most the bake's day). @default a day */
  readonly baselineMinutes?: number;
  /** More requests from the deployment's creation on (a customer flood): not in the previous version's day. */
  readonly flood?: readonly BakeTraffic[];
  /**
   * Requests sent all at once, failing on both versions, `atMinute` minutes after the shift (negative: in the
   * canary), routed as the alias routes every request then.
   */
  readonly burst?: { readonly requests: number; readonly atMinute: number };
  /**
   * Held to the target. Not a bad release at 1 request a minute: the new version serves about 50 requests before
   * the deadline, and one failing 5 % fails fewer than 3 in about half the deploys.
   */
  readonly target: boolean;
}

/** Deploys played per case: a rate of 0.5 % is measured to about 0.11 point (one standard error). */
export const DEPLOYS_PER_CASE = 4_000;

const n = (x: number) => x.toLocaleString('en-US');
const pct = (x: number) => `${+(100 * x).toFixed(2)} %`;

export const BAKE_CASES: readonly BakeCase[] = [
  ...[1, 10, 100, 1_000].map((r): BakeCase => ({
    release: 'good',
    what: `both versions fail 0.1 %, ${n(r)} req/min`,
    perMinute: r,
    oldFails: 0.001,
    newFails: 0.001,
    target: true,
  })),
  ...[10, 100, 1_000].map((r): BakeCase => ({
    release: 'good',
    what: `both versions fail 1 %, ${n(r)} req/min`,
    perMinute: r,
    oldFails: 0.01,
    newFails: 0.01,
    target: true,
  })),
  ...[1, 10, 100, 1_000].map((r): BakeCase => ({
    release: 'bad',
    what: `the new version fails 5.1 %, the previous one 0.1 %, ${n(r)} req/min`,
    perMinute: r,
    oldFails: 0.001,
    newFails: 0.001 + BAKE_EXCESS,
    target: r >= 10,
  })),
  ...[10, 100].map((r): BakeCase => ({
    release: 'bad',
    what: `the new version fails 6 %, the previous one 1 %, ${n(r)} req/min`,
    perMinute: r,
    oldFails: 0.01,
    newFails: 0.01 + BAKE_EXCESS,
    target: true,
  })),
  ...(['good', 'bad'] as const).map((release): BakeCase => ({
    release,
    what: `${release === 'good' ? 'both versions fail 0.1 %' : 'the new version fails 5.1 %, the previous one 0.1 %'}, 10 req/min, the function live for 2 hours only (a new stage)`,
    perMinute: 10,
    oldFails: 0.001,
    newFails: release === 'good' ? 0.001 : 0.001 + BAKE_EXCESS,
    baselineMinutes: 120,
    target: true,
  })),
  ...(['good', 'bad'] as const).map((release): BakeCase => ({
    release,
    what:
      release === 'good'
        ? 'a customer flood failing on both versions (30,000 req/min, 2 % Lambda errors and 5 % 503s), starting at the deploy, beside 10 req/min (0.1 % failing)'
        : 'the new version fails 5 points more during the customer flood above',
    perMinute: 10,
    oldFails: 0.001,
    newFails: 0.001,
    // The gate simulation's flood (gate-simulation.ts): its Lambda errors and its 503s.
    flood: [
      { perMinute: 30_000, oldFails: 0.02, newFails: release === 'good' ? 0.02 : 0.02 + BAKE_EXCESS },
      { perMinute: 30_000, oldFails: 0.05, newFails: release === 'good' ? 0.05 : 0.05 + BAKE_EXCESS },
    ],
    target: true,
  })),
  ...[-5, 0.5].map((atMinute): BakeCase => ({
    release: 'good',
    what: `an outsider sends 300 requests both versions answer 500 (one Pro key’s minute) all at once, ${atMinute < 0 ? 'in the canary' : 'just after the shift'}, beside 1,000 req/min (0.1 % failing)`,
    perMinute: 1_000,
    oldFails: 0.001,
    newFails: 0.001,
    burst: { requests: 300, atMinute },
    target: true,
  })),
  {
    release: 'bad',
    what: 'the new version fails every request, 10 req/min',
    perMinute: 10,
    oldFails: 0.001,
    newFails: 1,
    target: true,
  },
];

/** One deploy's bake: its decision and the minutes from the shift to it (what it adds to the release). */
export interface BakeRun {
  readonly rolledBack: boolean;
  readonly minutes: number;
  readonly requests: number;
  /** What it judged against: the previous version in the canary, or its day before. */
  readonly baseline: 'canary' | 'day';
}

/** Plays one deploy of `c` through the bake's looks. */
export function playBake(rng: () => number, c: BakeCase): BakeRun {
  const m = poisson(rng, c.perMinute * Math.min(BASELINE_MINUTES, c.baselineMinutes ?? BASELINE_MINUTES));
  const old: VersionCounts = { requests: m, failures: binomial(rng, m, c.oldFails) };
  const dayNeeded = requestsNeeded(old);
  const { weight } = DEPLOY;
  // Minutes from the deployment's creation (the start of its first whole minute); the canary starts a random point
  // into a minute after the pre-traffic check.
  const canaryStart = PRE_TRAFFIC_MINUTES + rng();
  const shift = canaryStart + DEPLOY.canarySeconds / 60;
  const hookStart = shift + rng() * HOOK_DELAY_MINUTES;
  const canaryEnd = Math.floor(hookStart - SHIFT_SLACK_MS / MINUTE);
  const traffic: readonly BakeTraffic[] = [c, ...(c.flood ?? [])];
  // Both versions' requests and failures per clock minute, drawn as the looks reach them.
  const newRows: MinuteCounts[] = [];
  const oldRows: MinuteCounts[] = [];
  const minuteAt = (i: number) => {
    while (newRows.length <= i) {
      const k = newRows.length;
      const part = (from: number, to: number) => Math.max(0, Math.min(k + 1, to) - Math.max(k, from));
      const before = part(-Infinity, canaryStart);
      const canary = part(canaryStart, shift);
      const after = part(shift, Infinity);
      const row = { n: 0, x: 0, m: 0, y: 0 };
      const serve = (toNew: number, toOld: number, newFails: number, oldFails: number) => {
        row.n += toNew;
        row.x += binomial(rng, toNew, newFails);
        row.m += toOld;
        row.y += binomial(rng, toOld, oldFails);
      };
      for (const t of traffic)
        serve(
          poisson(rng, t.perMinute * (canary * weight + after)),
          poisson(rng, t.perMinute * (before + canary * (1 - weight))),
          t.newFails,
          t.oldFails,
        );
      const at = c.burst && shift + c.burst.atMinute;
      if (c.burst && at! >= k && at! < k + 1) {
        const toNew = at! < canaryStart ? 0 : at! < shift ? binomial(rng, c.burst.requests, weight) : c.burst.requests;
        serve(toNew, c.burst.requests - toNew, 1, 1);
      }
      newRows.push({ start: k * MINUTE, requests: row.n, failures: row.x });
      oldRows.push({ start: k * MINUTE, requests: row.m, failures: row.y });
    }
  };
  let counted = 0;
  const sinceDeploy = { requests: 0, failures: 0 };
  let day = false;
  for (let look = 0; ; look++) {
    const minutes = look * LOOK_MINUTES;
    // Whole minutes before now - lag.
    const upTo = Math.floor(hookStart + minutes - LAG_MINUTES);
    for (; counted < upTo; counted++) {
      minuteAt(counted);
      sinceDeploy.requests += newRows[counted]!.requests;
      sinceDeploy.failures += newRows[counted]!.failures;
    }
    const canary = day
      ? undefined
      : canaryWindow(newRows.slice(0, counted), oldRows.slice(0, counted), canaryEnd * MINUTE, upTo * MINUTE);
    const r = judgeLook({
      ...(canary ? { canary } : {}),
      sinceDeploy: { ...sinceDeploy },
      day: old,
      dayNeeded,
      pastDeadline: minutes >= DEADLINE_MINUTES,
    });
    if (r.baseline === 'day') day = true;
    if (r.decision !== 'wait')
      return { rolledBack: r.decision === 'worse', minutes, requests: r.counts.newRequests, baseline: r.baseline! };
  }
}

export interface BakeMeasure {
  readonly case: BakeCase;
  readonly rolledBack: number;
  /** Minutes the bake added to the deploy: median and 95th percentile. */
  readonly medianMinutes: number;
  readonly p95Minutes: number;
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** Each case's share of deploys rolled back, seeded by the case's place in the list. */
export function measureBake(deploys: number = DEPLOYS_PER_CASE): BakeMeasure[] {
  return BAKE_CASES.map((c, i) => {
    const rng = random(6_500 + i);
    let rolledBack = 0;
    const minutes: number[] = [];
    for (let d = 0; d < deploys; d++) {
      const run = playBake(rng, c);
      if (run.rolledBack) rolledBack++;
      minutes.push(run.minutes);
    }
    minutes.sort((a, b) => a - b);
    return {
      case: c,
      rolledBack: rolledBack / deploys,
      medianMinutes: quantile(minutes, 0.5),
      p95Minutes: quantile(minutes, 0.95),
    };
  });
}

/** The targets: a good release rolled back in at most 0.5 % of deploys, a bad one in at least 99 %. */
export const meetsBakeTarget = (c: BakeCase, rolledBack: number): boolean =>
  c.release === 'good' ? rolledBack <= 0.005 : rolledBack >= 0.99;

/** A row of the docs' table. */
export interface BakeRow {
  readonly release: 'good' | 'bad';
  readonly case: string;
  readonly measured: string;
  /** Minutes from the shift to the bake's report: the median, and the 95th percentile in parentheses. */
  readonly minutes: string;
  readonly target: 'met' | 'NOT met' | 'beyond the deadline';
}

let measuredOnce: BakeMeasure[] | undefined;

/** measureBake's result, measured once per process. */
export const measuredBake = (): readonly BakeMeasure[] => (measuredOnce ??= measureBake());

/** The docs' rows: the case, the measured rate, the minutes added, and whether the target is met. */
export function bakeRatesRows(measured?: readonly BakeMeasure[]): BakeRow[] {
  measured ??= measuredBake();
  return measured.map(({ case: c, rolledBack, medianMinutes, p95Minutes }) => ({
    release: c.release,
    case: c.what,
    measured: c.release === 'good' ? `rolled back in ${pct(rolledBack)}` : `stopped in ${pct(rolledBack)}`,
    minutes: `${medianMinutes} (95 %: ${p95Minutes})`,
    target: !c.target ? 'beyond the deadline' : meetsBakeTarget(c, rolledBack) ? 'met' : 'NOT met',
  }));
}

/**
 * Minutes the bake adds to a release that changes a write (from the shift to its report), for a good version at
 * `perMinute` requests a minute: from the expected counts, not a draw. A release with no write has no bake.
 */
export function bakeAddedMinutes(perMinute: number, background = 0.001): number {
  const m = perMinute * BASELINE_MINUTES;
  const needed = requestsNeeded({ requests: m, failures: Math.round(m * background) });
  const canary = DEPLOY.canarySeconds / 60;
  for (let look = 0; look * LOOK_MINUTES < DEADLINE_MINUTES; look++) {
    const t = look * LOOK_MINUTES;
    // Counted at a look: the requests up to t - lag, the canary's at its weight, then every one after the shift.
    const canaryCounted = Math.min(canary, Math.max(0, canary + t - LAG_MINUTES));
    if (perMinute * (DEPLOY.weight * canaryCounted + Math.max(0, t - LAG_MINUTES)) >= needed) return t;
  }
  return DEADLINE_MINUTES;
}

/** The added minutes at the traffic the docs state, at 0.1 % failures (1 %: about 35 at 10 req/min, 6 at 100). */
export const BAKE_ADDED_MINUTES: Readonly<Record<string, number>> = Object.fromEntries(
  [1, 10, 100, 1_000].map((r) => [`${n(r)} req/min`, bakeAddedMinutes(r)]),
);

/** The docs' bake-rates table: each case's measured rate and what the bake adds to a release's duration. */
export function bakeRatesTable(): string {
  return [
    '| Release | Write traffic | Measured | Minutes from the shift to the report (median, 95 %) | Target (good ≤ 0.5 % rolled back, bad ≥ 99 % stopped) |',
    '|---|---|---|---|---|',
    ...bakeRatesRows().map((r) => `| ${r.release} | ${r.case} | ${r.measured} | ${r.minutes} | ${r.target} |`),
  ].join('\n');
}
