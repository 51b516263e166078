/**
 * CodeDeploy's BeforeAllowTraffic hook of every deployment group of the stack: reads which function and version the
 * deployment moves `live` to (the deployment's AppSpec, as CodeDeploy records it), runs the pre-traffic check of
 * that function against that version (pre-traffic-check.ts), and reports Succeeded or Failed. A Failed stops the
 * deployment before any traffic shifts, and the group's auto-rollback leaves `live` where it was.
 *
 * Every path reports: a hook that throws or times out without reporting leaves the deployment waiting for an hour
 * before CodeDeploy fails it, so an error of the hook itself is reported as Failed (a deploy is retried, a bad
 * version is not let through by a broken check).
 *
 * The AWS calls are ports, so the same flow runs against the emulator's functions in the tests.
 */
import { AUTHORIZER, ROUTES, type Route } from '../../contract/routes.ts';
import {
  authContextOf,
  authorizerProbes,
  compareVersions,
  existingItemListing,
  existingItemOf,
  judgeVersion,
  listingEvent,
  needsExistingItem,
  operationProbes,
  type OperationProbeOptions,
  type Outcome,
  type Probe,
  type Verdict,
} from './pre-traffic-check.ts';
import { REQUESTS_PER_VERSION } from './pre-traffic-judge.ts';

/** Invocations in flight at once against the two versions: a few warm containers each, not a burst. */
export const CONCURRENCY = 10;
/**
 * The share of the check's key's per-minute budget one read operation's hook spends: the key's limiter counts every
 * request of every operation's hook, and a release may deploy every operation at once, so each read operation takes
 * its part; a tenth stays spare for the create's one request, getPet's listing and the minute's edges. A 429 judges
 * nothing (compareVersions), and 429s count toward the key's ban.
 */
export const BUDGET_SHARE = 0.9 / ROUTES.filter((r) => r.method === 'GET').length;
/** The longest a paced comparison may take: the hook's Lambda timeout is 15 minutes (lib/constructs/pre-traffic-hook.ts). */
export const MAX_PACED_MS = 10 * 60_000;

/** What CodeDeploy sends a lifecycle hook. */
export interface LifecycleHookEvent {
  readonly DeploymentId: string;
  readonly LifecycleEventHookExecutionId: string;
}

/** The function a deployment moves, the version it moves `live` to, and the one `live` is on (when named). */
export interface DeploymentTarget {
  readonly functionName: string;
  readonly alias: string;
  readonly targetVersion: string;
  readonly currentVersion?: string;
}

export interface PreTrafficPorts {
  /** The deployment's AppSpec (GetDeployment: the revision's content, a JSON text for a Lambda deployment). */
  appSpec(deploymentId: string): Promise<string>;
  /** Invokes `functionName:qualifier` with `event`; a function error is `{ ok: false }`. */
  invoke(functionName: string, qualifier: string, event: unknown): Promise<Outcome>;
  /** PutLifecycleEventHookExecutionStatus. */
  report(event: LifecycleHookEvent, status: Verdict['status']): Promise<void>;
  /** The check's own key (its secret), read when needed. */
  checkKey(): Promise<string>;
  /** Where the problems found are written (the hook's log). */
  log(line: string): void;
  /** The clock the requests are paced by. */
  now(): number;
  /** Waits `ms`. */
  sleep(ms: number): Promise<void>;
}

export interface PreTrafficConfig {
  /** The stack's functions: physical name → function name (an operationId, or `authorizer`). */
  readonly functions: Readonly<Record<string, string>>;
  readonly stage: string;
  /** The stage the usage keys are named for (the authorizer's USAGE_KEYS_STAGE, or its STAGE). */
  readonly keysStage: string;
  /** A method ARN of the stage, as the gateway sends the authorizer (`arn:aws:execute-api:…:<api>/<stage>/GET/…`). */
  readonly methodArn: string;
  /** The `live` alias's name: what the check reads the key's context through for an operation. */
  readonly liveAlias: string;
}

/**
 * The one function a Lambda deployment moves, from its AppSpec: `Resources` holds one entry whose properties name
 * the function, the alias, the current version and the target version (CodeDeploy's AppSpec for AWS Lambda).
 */
export function deploymentTarget(appSpec: string): DeploymentTarget {
  const spec = JSON.parse(appSpec) as {
    Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }>[];
  };
  const resources = (spec.Resources ?? []).flatMap((r) => Object.values(r));
  if (resources.length !== 1) throw new Error(`the AppSpec names ${resources.length} resources, not one function`);
  const p = resources[0]!.Properties ?? {};
  const [name, alias, version, current] = [p.Name, p.Alias, p.TargetVersion, p.CurrentVersion];
  if (resources[0]!.Type !== 'AWS::Lambda::Function' || typeof name !== 'string' || typeof alias !== 'string')
    throw new Error(`the AppSpec's resource is not a Lambda alias: ${JSON.stringify(resources[0])}`);
  if (typeof version !== 'string' && typeof version !== 'number')
    throw new Error(`the AppSpec names no target version: ${JSON.stringify(p)}`);
  // A function may be named by its ARN; the check invokes it by name and qualifier.
  const functionName = name.startsWith('arn:') ? name.split(':')[6]! : name;
  const currentVersion = typeof current === 'string' || typeof current === 'number' ? String(current) : undefined;
  return { functionName, alias, targetVersion: String(version), ...(currentVersion ? { currentVersion } : {}) };
}

/** Judges the deployment's target version; throws only what the caller reports as Failed. */
export async function checkDeployment(
  event: LifecycleHookEvent,
  ports: PreTrafficPorts,
  config: PreTrafficConfig,
): Promise<Verdict> {
  const target = deploymentTarget(await ports.appSpec(event.DeploymentId));
  const name = config.functions[target.functionName];
  // Only this stack's functions: the hook has no business judging (or invoking) anything else.
  if (!name) return { status: 'Failed', problems: [`${target.functionName} is not a function of this stack`] };
  const invokeTarget = (e: unknown) => ports.invoke(target.functionName, target.targetVersion, e);
  // The version now live: the AppSpec's CurrentVersion, or the alias itself, which no traffic has left yet.
  const invokeLive = (e: unknown) => ports.invoke(target.functionName, target.currentVersion ?? config.liveAlias, e);
  const token = await ports.checkKey();
  const authOpts = { token, keysStage: config.keysStage, methodArn: config.methodArn };
  const compare = async (probeAt: (i: number) => Probe, intervalMs: number): Promise<Verdict> => {
    const c = await compareVersions(probeAt, invokeTarget, invokeLive, {
      perVersion: REQUESTS_PER_VERSION,
      concurrency: CONCURRENCY,
      intervalMs,
      now: () => ports.now(),
      sleep: (ms) => ports.sleep(ms),
    });
    for (const n of c.notes) ports.log(`pre-traffic check of ${event.DeploymentId}: ${n}`);
    return c;
  };
  if (name === AUTHORIZER.name) {
    // The check's key and a fresh unknown key in turn (the authorizer has no limiter to pace for).
    const allow = authorizerProbes(authOpts)[0]!;
    return compare((i) => (i % 2 === 0 ? allow : authorizerProbes(authOpts)[1]!), 0);
  }
  const route = ROUTES.find((r) => r.operationId === name);
  if (!route) return { status: 'Failed', problems: [`no route or authorizer is named ${name}`] };
  // The key's context as the gateway would pass it: the live authorizer's answer for the check's key.
  const authorizerName = Object.entries(config.functions).find(([, n]) => n === AUTHORIZER.name)?.[0];
  if (!authorizerName) return { status: 'Failed', problems: ['the stack names no authorizer'] };
  const allowed = await ports.invoke(authorizerName, config.liveAlias, authorizerProbes(authOpts)[0]!.event);
  const auth = authContextOf(allowed);
  if (!auth)
    return {
      status: 'Failed',
      problems: [`the live authorizer does not allow the check's key: ${JSON.stringify(allowed)}`],
    };
  const opts = { stage: config.stage, auth, runId: event.DeploymentId };
  const existingId = needsExistingItem(route) ? await findExistingItem(route, ports, config, opts) : undefined;
  const probes = operationProbes(route, { ...opts, ...(existingId ? { existingId } : {}) });
  // A write is sent once, to the new version only: each request makes an item every customer sees. Its steady
  // failures are the canary gates' to judge.
  if (route.method !== 'GET' || probes.length === 0) return judgeVersion(probes, invokeTarget);
  const perMinute = Math.floor(auth.perMinute * BUDGET_SHARE);
  const intervalMs = 60_000 / Math.max(1, perMinute);
  if (2 * REQUESTS_PER_VERSION * intervalMs > MAX_PACED_MS)
    return {
      status: 'Failed',
      problems: [
        `the check's key (plan ${auth.plan}, ${auth.perMinute} requests a minute) cannot send the ` +
          `${2 * REQUESTS_PER_VERSION} requests of ${route.operationId}'s check within ${MAX_PACED_MS / 60_000} minutes ` +
          `at its share of that budget (${perMinute} a minute): give the check a Business key: ` +
          `npm run admin -- keys issue-check-key --stage ${config.stage} (it moves the check's own Free key to ` +
          'Business, or issues a Business one and stores it in its secret)',
      ],
    };
  return compare((i) => probes[i % probes.length]!, intervalMs);
}

/**
 * An item the check's key can read, for an operation whose request names one (getPet): read through the `live`
 * alias of the collection's listing (listPets), which the hook's role may invoke already. Its success is then
 * required (200 and a contract body): a version answering 404 to every id fails. Undefined, and the documented 404
 * accepted besides the success, only when the stage has no item yet, or when the live listing cannot tell: that is
 * logged, and not a failure, because the live listing is another function's, and failing this deployment for it
 * would roll back the very release that fixes it.
 */
async function findExistingItem(
  route: Route,
  ports: PreTrafficPorts,
  config: PreTrafficConfig,
  opts: OperationProbeOptions,
): Promise<string | undefined> {
  const listing = existingItemListing(route, ROUTES);
  const physical = listing && Object.entries(config.functions).find(([, n]) => n === listing.operationId)?.[0];
  if (!listing || !physical) {
    ports.log(`pre-traffic check of ${opts.runId}: ${route.operationId} has no listing to find an item: 404 accepted`);
    return undefined;
  }
  const outcome = await ports
    .invoke(physical, config.liveAlias, listingEvent(listing, opts))
    .catch((error: unknown): Outcome => ({ ok: false, error }));
  const found = existingItemOf(listing, outcome);
  if ('found' in found) return found.found;
  if ('unknown' in found)
    ports.log(
      `pre-traffic check of ${opts.runId}: the live ${listing.operationId} could not name an item (${found.unknown}): ` +
        `${route.operationId}'s 404 accepted besides its success`,
    );
  return undefined;
}

/** The hook: judge, log what was wrong, report. */
export async function preTrafficHook(
  event: LifecycleHookEvent,
  ports: PreTrafficPorts,
  config: PreTrafficConfig,
): Promise<Verdict> {
  let verdict: Verdict;
  try {
    verdict = await checkDeployment(event, ports, config);
  } catch (error) {
    verdict = {
      status: 'Failed',
      problems: [`the check itself failed: ${(error as Error)?.message ?? String(error)}`],
    };
  }
  for (const p of verdict.problems) ports.log(`pre-traffic check of ${event.DeploymentId}: ${p}`);
  await ports.report(event, verdict.status);
  return verdict;
}
