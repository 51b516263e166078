/**
 * The bake: CodeDeploy's AfterAllowTraffic hook for the operations that write. After the shift it reports Failed
 * (auto-rollback moves `live` back) when the new version fails more often than the previous one, else Succeeded. An
 * error of the bake itself reports Failed.
 * Why: at low traffic a write's canary is too short to judge, and a check's writes would make items customers see.
 * So the bake waits for customers' own requests, as many as the test needs (requestsNeeded).
 * The test is pre-traffic-judge.ts's. Its baseline is the canary window when that gives BAKE_POWER: there both
 * versions serve the same customers at once. Else it is the previous version's last day, which assumes the old rate
 * still holds: an incident during the bake counts against the new version.
 * Lambda stops at 15 minutes and CodeDeploy waits an hour for a report: the bake continues in a new invocation
 * (continueLater). Sizing: bench/models/bake-simulation.ts; measured rates: docs/deployment.md, "The bake".
 */
import { z } from 'zod';
import { binomialUpperTail, regressionPValue, type Counts } from './pre-traffic-judge.ts';
import { deploymentTarget, type LifecycleHookEvent } from './pre-traffic-hook.ts';

/** The excess failure share (absolute: 0.1 % to 5.1 %) the bake is sized to catch. */
export const BAKE_EXCESS = 0.05;
/**
 * The share of such versions the sizing plans to stop. The target is 99 %; the half point above it covers the old
 * rate being estimated, not known, and the minute-by-minute arrival of the counts.
 */
export const BAKE_POWER = 0.995;
/**
 * The test's level at the final look. With BAKE_EARLY_ALPHA at each of at most BAKE_MAX_LOOKS looks, a good
 * release is rolled back in at most 0.3 % + 0.06 % of deploys (a union bound; the test is discrete, and measured
 * lower), under the 0.5 % target.
 */
export const BAKE_ALPHA = 0.003;
/** The level of each look before the final one: a version that fails plainly is rolled back within minutes. */
export const BAKE_EARLY_ALPHA = 1e-5;
/** The new version's failures below which it is never judged worse. */
export const BAKE_MIN_FAILURES = 3;
/** Between two looks at the counts: CloudWatch's datapoints are per minute. */
export const BAKE_LOOK_EVERY_MS = 60_000;
/**
 * The bake decides by then (from the hook's first run), on what it has: CodeDeploy fails a hook that has not
 * reported within an hour, and the last look, the report and a continuation's start need a few minutes of it.
 */
export const BAKE_DEADLINE_MS = 50 * 60_000;
/** The most looks a bake makes: one at its start, one a minute to the deadline. */
export const BAKE_MAX_LOOKS = BAKE_DEADLINE_MS / BAKE_LOOK_EVERY_MS + 1;
/** How long one invocation looks before it continues in another: Lambda stops a function at 15 minutes. */
export const BAKE_RUN_MS = 12 * 60_000;
/**
 * The minutes CloudWatch may not have yet: Lambda's metrics arrive a minute or two after the minute they count,
 * the functions' embedded-metric counts (ServerError) after their log is processed. Counts stop this far back.
 */
export const METRICS_LAG_MS = 3 * 60_000;
/**
 * How late after the shift CodeDeploy may start the hook: the canary's window ends a whole minute before the hook's
 * first run, so it holds no minute after the shift (when the new version serves everyone) unless the hook started
 * later than this.
 */
export const SHIFT_SLACK_MS = 60_000;
/** The previous version's window, before the deployment started: a day, so its rate is nearly known. */
export const BASELINE_MS = 24 * 60 * 60_000;
/** The most requests the bake ever waits for (the sizing's search stops there; the deadline comes first anyway). */
export const MAX_REQUESTS = 5_000;

/** A version's requests through the alias and its failures (Lambda errors plus the 5xx it answered). */
export interface VersionCounts {
  readonly requests: number;
  readonly failures: number;
}

/** A version's counts in one clock minute (`start`: epoch ms of the minute). */
export interface MinuteCounts extends VersionCounts {
  readonly start: number;
}

const total = (rows: readonly VersionCounts[]): VersionCounts =>
  rows.reduce((a, r) => ({ requests: a.requests + r.requests, failures: a.failures + r.failures }), {
    requests: 0,
    failures: 0,
  });

/** Both versions over the canary's whole minutes counted so far; `complete` once the window's last minute is in. */
export interface CanaryCounts {
  readonly new: VersionCounts;
  readonly old: VersionCounts;
  readonly complete: boolean;
}

/**
 * The canary's window: the whole minutes after the first one in which the new version served through the alias
 * (that minute began before the canary did: the previous version served it alone in part), up to `end` (before the
 * shift), counted up to `upTo` (what CloudWatch has). Every minute in it routed each request with the canary's
 * weight, so pooling them keeps the test sound however the stage's failures vary from minute to minute.
 */
export function canaryWindow(
  newMinutes: readonly MinuteCounts[],
  oldMinutes: readonly MinuteCounts[],
  end: number,
  upTo: number,
): CanaryCounts {
  const first = newMinutes.find((m) => m.requests > 0 && m.start < end)?.start;
  const to = Math.min(end, upTo);
  const inside = (m: MinuteCounts) => first !== undefined && m.start > first && m.start < to;
  return { new: total(newMinutes.filter(inside)), old: total(oldMinutes.filter(inside)), complete: upTo >= end };
}

/** The p-value of the bake's test, 1 below BAKE_MIN_FAILURES. */
export function bakePValue(c: Counts): number {
  return c.newFailures >= BAKE_MIN_FAILURES ? regressionPValue(c) : 1;
}

/**
 * The fewest failures of `n` requests that the final test judges worse, given the old version's counts:
 * undefined when none up to `n` would be.
 */
function failuresToStop(n: number, old: VersionCounts, from = BAKE_MIN_FAILURES): number | undefined {
  const judged = (x: number) =>
    regressionPValue({ newFailures: x, newRequests: n, oldFailures: old.failures, oldRequests: old.requests }) <=
    BAKE_ALPHA;
  let lo = Math.max(from, BAKE_MIN_FAILURES);
  if (lo > n || !judged(n)) return undefined;
  // The p-value falls as x grows (one more failure of the new version's): the fewest is found by halving.
  let hi = n;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (judged(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * How often `n` requests of a version failing BAKE_EXCESS more than the old version's rate are judged worse at the
 * final look (the exact binomial sum, the old counts as observed).
 */
export function powerAt(n: number, old: VersionCounts): number {
  const stop = failuresToStop(n, old);
  if (stop === undefined) return 0;
  return binomialUpperTail(n, Math.min(1, oldRate(old) + BAKE_EXCESS), stop);
}

const oldRate = (old: VersionCounts) => (old.requests > 0 ? old.failures / old.requests : 0);

/**
 * The requests the new version must serve before the final look: the fewest (in steps of 10) with which a version
 * failing BAKE_EXCESS more than the old one's rate is judged worse in BAKE_POWER of deploys. Depends on the old
 * version's counts only, never on the new version's, so waiting for it does not bend the test. About 180 at 0.1 %
 * failures, 330 at 1 %.
 */
export function requestsNeeded(old: VersionCounts): number {
  let from = BAKE_MIN_FAILURES;
  for (let n = 10; n <= MAX_REQUESTS; n += 10) {
    // The failures needed never fall as n grows (the new version's share of the failures grows with it): the
    // search for the next n starts where this one stopped, or past n when no count of n stops it.
    const stop = failuresToStop(n, old, from);
    if (stop !== undefined && binomialUpperTail(n, Math.min(1, oldRate(old) + BAKE_EXCESS), stop) >= BAKE_POWER)
      return n;
    from = stop ?? n + 1;
  }
  return MAX_REQUESTS;
}

/** What a look decides: stop (worse), pass (not worse), or wait for more requests. */
export type BakeDecision = 'worse' | 'not-worse' | 'wait';

/**
 * One look at the counts: worse at BAKE_EARLY_ALPHA at any look; at the final look (enough requests, or the
 * deadline passed) worse at BAKE_ALPHA, else not worse.
 */
export function judgeBake(c: Counts, needed: number, pastDeadline: boolean): BakeDecision {
  const p = bakePValue(c);
  if (p <= BAKE_EARLY_ALPHA) return 'worse';
  if (c.newRequests < needed && !pastDeadline) return 'wait';
  return p <= BAKE_ALPHA ? 'worse' : 'not-worse';
}

/** Which previous-version counts a look judged against: the canary's (concurrent) or the day before's. */
export type Baseline = 'canary' | 'day';

/** What a look knows. */
export interface Look {
  /** The canary's comparison so far; undefined once the day's was chosen, or with no previous version named. */
  readonly canary?: CanaryCounts;
  /** The new version since the deployment started, and the previous version's day before it. */
  readonly sinceDeploy: VersionCounts;
  readonly day: VersionCounts;
  /** requestsNeeded(day), computed once. */
  readonly dayNeeded: number;
  readonly pastDeadline: boolean;
}

export interface LookResult {
  readonly decision: BakeDecision;
  /** Undefined while the canary's window is still arriving and too small so far. */
  readonly baseline: Baseline | undefined;
  readonly counts: Counts;
  /** Against the canary: how often its requests catch a version failing BAKE_EXCESS more (powerAt). */
  readonly power?: number;
}

const countsOf = (n: VersionCounts, o: VersionCounts): Counts => ({
  newFailures: n.failures,
  newRequests: n.requests,
  oldFailures: o.failures,
  oldRequests: o.requests,
});

/**
 * One look: against the canary when its window holds enough requests that a version failing BAKE_EXCESS more is
 * caught in BAKE_POWER of deploys (decided there, at the final level). While the window is still arriving, only a
 * plain regression in it stops the bake (the day's comparison would stop a good release in an incident). Once it is
 * complete and too small, against the day before, as judgeBake does.
 */
export function judgeLook(look: Look): LookResult {
  if (look.canary) {
    const c = countsOf(look.canary.new, look.canary.old);
    // Sized on the previous version's counts and the new version's requests, never on its failures.
    const power = powerAt(c.newRequests, look.canary.old);
    if (power >= BAKE_POWER)
      return { decision: judgeBake(c, c.newRequests, true), baseline: 'canary', counts: c, power };
    if (!look.canary.complete && !look.pastDeadline)
      return { decision: bakePValue(c) <= BAKE_EARLY_ALPHA ? 'worse' : 'wait', baseline: undefined, counts: c, power };
  }
  const c = countsOf(look.sinceDeploy, look.day);
  return {
    decision: judgeBake(c, look.dayNeeded, look.pastDeadline),
    baseline: 'day',
    counts: c,
  };
}

/** What the bake carries from one invocation to the next (the continuation's event). */
const bakeStateSchema = z.object({
  /** The hook's first run (epoch ms): the deadline counts from it. */
  startedAt: z.number(),
  /** The deployment's creation (epoch ms): the new version's counts start at it, the old version's end there. */
  deploymentStartedAt: z.number(),
  functionName: z.string().min(1),
  alias: z.string().min(1),
  operation: z.string().min(1),
  targetVersion: z.string().min(1),
  currentVersion: z.string().min(1).optional(),
  old: z.object({ requests: z.number().int().min(0), failures: z.number().int().min(0) }),
  needed: z.number().int().min(1),
  /** 'day' once the canary's window proved too small: later looks skip it. */
  baseline: z.enum(['canary', 'day']).optional(),
  /** Invocations of the hook so far for this deployment (1: CodeDeploy's own). */
  run: z.number().int().min(1),
});
export type BakeState = z.infer<typeof bakeStateSchema>;

/** What CodeDeploy sends the hook, and what the hook sends itself to continue (with its state). */
export const bakeEventSchema = z.object({
  DeploymentId: z.string().min(1),
  LifecycleEventHookExecutionId: z.string().min(1),
  bake: bakeStateSchema.optional(),
});
export type BakeEvent = LifecycleHookEvent & { readonly bake?: BakeState };

/** One metric window of a version run through the alias: [from, to) in epoch ms, whole minutes. */
export interface CountWindow {
  readonly functionName: string;
  readonly alias: string;
  /** The operation its ServerError count is published under. */
  readonly operation: string;
  /** The version that ran; undefined: every version through the alias. */
  readonly version?: string;
  readonly from: number;
  readonly to: number;
}

export interface BakePorts {
  /** GetDeployment: the AppSpec's text and when the deployment was created (epoch ms). */
  deployment(deploymentId: string): Promise<{ readonly appSpec: string; readonly createdAt: number }>;
  /**
   * The version's alias invocations and failures (Lambda Errors plus its ServerError) in the window, per clock
   * minute (minutes with no datapoint may be left out).
   */
  counts(window: CountWindow): Promise<readonly MinuteCounts[]>;
  /** PutLifecycleEventHookExecutionStatus. */
  report(event: LifecycleHookEvent, status: 'Succeeded' | 'Failed'): Promise<void>;
  /** Invokes the hook again, asynchronously, with this event. */
  continueLater(event: BakeEvent): Promise<void>;
  log(line: string): void;
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface BakeConfig {
  /** The functions the bake judges (the stack's writes): function name → operationId. */
  readonly functions: Readonly<Record<string, string>>;
}

export type BakeOutcome =
  | { readonly status: 'Succeeded' | 'Failed'; readonly reason: string }
  | { readonly status: 'Continued'; readonly state: BakeState };

const MINUTE = 60_000;
const floorMinute = (ms: number) => ms - (((ms % MINUTE) + MINUTE) % MINUTE);
/** A version as CloudWatch's dimensions name it: the number, even when the AppSpec gives an ARN. */
const versionNumber = (v: string) => v.split(':').pop()!;
const percent = (x: number) => `${(100 * x).toFixed(2)} %`;

/** The first run: which function and versions, the old version's day, and how many requests to wait for. */
async function begin(event: LifecycleHookEvent, ports: BakePorts, config: BakeConfig): Promise<BakeState> {
  const { appSpec, createdAt } = await ports.deployment(event.DeploymentId);
  ports.log(`bake of ${event.DeploymentId}: AppSpec ${appSpec}`);
  const target = deploymentTarget(appSpec);
  const operation = config.functions[target.functionName];
  // Only this stack's writes: the hook has nothing to compare for any other function.
  if (!operation) throw new Error(`${target.functionName} is not one of the functions the bake judges`);
  const deploymentStartedAt = floorMinute(createdAt);
  const currentVersion = target.currentVersion === undefined ? undefined : versionNumber(target.currentVersion);
  const base = {
    functionName: target.functionName,
    alias: target.alias,
    operation,
    targetVersion: versionNumber(target.targetVersion),
  };
  // The day before the deployment, every version through the alias: the new one served nothing yet. Not the
  // previous version alone: one that went live minutes ago (a quick follow-up, a break-glass fix) has too few
  // requests for the test to stop anything.
  const old = total(await ports.counts({ ...base, from: deploymentStartedAt - BASELINE_MS, to: deploymentStartedAt }));
  if (old.requests === 0)
    ports.log(
      `bake of ${event.DeploymentId}: ${base.functionName} served no request through ${base.alias} in the day ` +
        'before: each failure of the new version counts against it',
    );
  const needed = requestsNeeded(old);
  ports.log(
    `bake of ${event.DeploymentId}: ${base.functionName} version ${base.targetVersion} against ${currentVersion ?? 'none'} ` +
      `(${old.failures} failures of ${old.requests} requests through ${base.alias} in the day before); judged against the canary when ` +
      `it holds enough requests, else waiting for ${needed} requests or ${BAKE_DEADLINE_MS / MINUTE} minutes`,
  );
  return {
    startedAt: ports.now(),
    deploymentStartedAt,
    ...base,
    ...(currentVersion ? { currentVersion } : {}),
    old,
    needed,
    run: 1,
  };
}

/** Looks until it decides, or until this invocation's time is up (then continues in another). */
async function bake(event: BakeEvent, ports: BakePorts, config: BakeConfig): Promise<BakeOutcome> {
  let state = event.bake ?? (await begin(event, ports, config));
  const runStarted = ports.now();
  const deadline = state.startedAt + BAKE_DEADLINE_MS;
  const canaryEnd = floorMinute(state.startedAt - SHIFT_SLACK_MS);
  const window = (version: string, to: number) =>
    to > state.deploymentStartedAt
      ? ports.counts({
          functionName: state.functionName,
          alias: state.alias,
          operation: state.operation,
          version,
          from: state.deploymentStartedAt,
          to,
        })
      : Promise.resolve([]);
  for (;;) {
    const now = ports.now();
    const to = floorMinute(now - METRICS_LAG_MS);
    const fresh = await window(state.targetVersion, to);
    const canary =
      state.baseline !== 'day' && state.currentVersion
        ? canaryWindow(fresh, await window(state.currentVersion, Math.min(canaryEnd, to)), canaryEnd, to)
        : undefined;
    const pastDeadline = now >= deadline;
    const look = judgeLook({
      canary,
      sinceDeploy: total(fresh),
      day: state.old,
      dayNeeded: state.needed,
      pastDeadline,
    });
    const { decision, baseline, counts: c } = look;
    if (baseline === 'day' && state.baseline !== 'day') state = { ...state, baseline: 'day' };
    const against =
      baseline === 'canary'
        ? 'the previous version in the canary'
        : baseline === 'day'
          ? `every version through live the day before; ${state.needed} requests wanted`
          : 'the previous version in the canary so far';
    const seen =
      `${c.newFailures} failures of ${c.newRequests} requests against ${c.oldFailures} of ${c.oldRequests} ` +
      `(${against}), p = ${bakePValue(c).toPrecision(3)}`;
    if (decision !== 'wait') {
      const short =
        baseline === 'day' && c.newRequests < state.needed
          ? `; decided at the deadline on ${c.newRequests} of the ${state.needed} requests wanted: at this traffic ` +
            `a version failing ${percent(BAKE_EXCESS)} more is caught in about ${percent(powerAt(c.newRequests, state.old))} of deploys`
          : '';
      return decision === 'worse'
        ? { status: 'Failed', reason: `the new version fails more often than the previous one: ${seen}${short}` }
        : { status: 'Succeeded', reason: `the new version fails no more often than the previous one: ${seen}${short}` };
    }
    ports.log(`bake of ${event.DeploymentId}: waiting: ${seen}`);
    const next = Math.min(BAKE_LOOK_EVERY_MS, Math.max(0, deadline - now));
    if (now + next - runStarted > BAKE_RUN_MS) {
      const continued = { ...state, run: state.run + 1 };
      await ports.continueLater({
        DeploymentId: event.DeploymentId,
        LifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
        bake: continued,
      });
      return { status: 'Continued', state: continued };
    }
    await ports.sleep(next);
  }
}

/** The hook: bake, log, report (or continue in another invocation). */
export async function bakeHook(event: BakeEvent, ports: BakePorts, config: BakeConfig): Promise<BakeOutcome> {
  let outcome: BakeOutcome;
  try {
    outcome = await bake(event, ports, config);
  } catch (error) {
    outcome = { status: 'Failed', reason: `the bake itself failed: ${(error as Error)?.message ?? String(error)}` };
  }
  if (outcome.status === 'Continued') {
    ports.log(`bake of ${event.DeploymentId}: continued in invocation ${outcome.state.run}`);
    return outcome;
  }
  ports.log(`bake of ${event.DeploymentId}: ${outcome.status}: ${outcome.reason}`);
  await ports.report(event, outcome.status);
  return outcome;
}
