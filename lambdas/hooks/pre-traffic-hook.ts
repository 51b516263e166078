/**
 * CodeDeploy's BeforeAllowTraffic hook of every deployment group: it reads the function and version the deployment
 * moves `live` to (the AppSpec, JSON or YAML), runs the pre-traffic check (pre-traffic-check.ts) and reports.
 * A Failed stops the deployment before any traffic shifts; auto-rollback leaves `live` where it was. "cannot
 * judge:" means the check could not tell (the live version broken, the check's keys missing or spent). Break glass
 * (`-c animal-store:breakGlass="<reason>"`) skips the check for one deploy.
 * Every path reports: an unreported hook holds the deployment for an hour, so the hook's own error reports Failed.
 * The AWS calls are ports, so the tests run the same flow against the emulator's functions.
 */
import { parse } from 'yaml';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { AUTHORIZER, ROUTES, writes, type Route } from '../../contract/routes.ts';
import { issueCheckKeysCommand, type CheckKeys } from './check-keys.ts';
import {
  BREAK_GLASS,
  BREAK_GLASS_HINT,
  allowProbe,
  authContextOf,
  authorizerProbeAt,
  compareVersions,
  existingItemListing,
  existingItemOf,
  firstPageSample,
  CREATE_RETRY_MS,
  CREATE_TRIES,
  judgeVersion,
  listingEvent,
  needsExistingItem,
  nextPageOf,
  operationProbes,
  sampleEvent,
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
 * its part; a tenth stays spare for the create's one request, the lookups (the live authorizer, getPet's listing,
 * the first pages a cursor is taken from) and the minute's edges. 429s count toward the key's ban.
 */
export const BUDGET_SHARE = 0.9 / ROUTES.filter((r) => !writes(r)).length;
/** Requests a minute a read operation's check sends with a key of `perMinute`: its share (BUDGET_SHARE). */
export const pacedPerMinute = (perMinute: number): number => Math.floor(perMinute * BUDGET_SHARE);
/** How long a read operation's paced comparison takes with a key of `perMinute`: both versions' requests. */
export const pacedCheckMs = (perMinute: number): number =>
  (2 * REQUESTS_PER_VERSION * 60_000) / Math.max(1, pacedPerMinute(perMinute));
/**
 * The longest a paced comparison may take (pacedCheckMs): the hook's Lambda timeout is 15 minutes
 * (lib/constructs/pre-traffic-hook.ts), and the lookups before it take seconds.
 */
export const MAX_PACED_MS = 12 * 60_000;
/** The plan whose check key the operations' checks send: the largest standard budget (docs/deployment.md). */
export const OPERATIONS_PLAN: PlanName = 'business';
/** Tries at a live first page, for the cursor of the second: one failed answer is not the stage's state. */
const FIRST_PAGE_TRIES = 3;

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
  /** The deployment's AppSpec (GetDeployment: the revision's content, JSON or YAML). */
  appSpec(deploymentId: string): Promise<string>;
  /**
   * Invokes `functionName:qualifier` with `event`; a function error is `{ ok: false }`. A rejection is the hook's own
   * call failing (an SDK error, a throttle), which judges no version.
   */
  invoke(functionName: string, qualifier: string, event: unknown): Promise<Outcome>;
  /** PutLifecycleEventHookExecutionStatus. */
  report(event: LifecycleHookEvent, status: Verdict['status']): Promise<void>;
  /** The check's own keys, one per plan (its secret), read when needed. */
  checkKeys(): Promise<CheckKeys>;
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
  /** The `live` alias's name: what the check reads the key's context and getPet's item through. */
  readonly liveAlias: string;
  /** The operations (the route table unless a test gives its own). */
  readonly routes?: readonly Route[];
}

/**
 * A Lambda function's name from its name or ARN (`arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`).
 */
const functionNameOf = (name: string): string => (name.startsWith('arn:') ? (name.split(':')[6] ?? '') : name);

/**
 * A version as the AppSpec may give it: a number, its text, or the version's ARN (its qualifier); undefined if none.
 */
function versionOf(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  const version = text?.startsWith('arn:') ? text.split(':')[7] : text;
  // A published version is a positive integer: `$LATEST` or an alias would compare the wrong code.
  if (version === undefined || !/^[1-9][0-9]*$/.test(version))
    throw new Error(`the AppSpec's ${what} is not a version number or a version's ARN: ${JSON.stringify(value)}`);
  return version;
}

/**
 * The one function a Lambda deployment moves, from its AppSpec (JSON or YAML, as CodeDeploy may hand it):
 * `Resources` holds one entry whose properties name the function (a name or an ARN), the alias, the current version
 * and the target version (each a number, its text or a version ARN).
 */
export function deploymentTarget(appSpec: string): DeploymentTarget {
  // YAML is a superset of JSON: one parser reads both forms.
  const spec = parse(appSpec) as { Resources?: unknown } | null;
  const raw = spec?.Resources;
  const entries = (Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? [raw] : []) as Record<
    string,
    { Type?: string; Properties?: Record<string, unknown> }
  >[];
  const resources = entries.flatMap((r) => (r && typeof r === 'object' ? Object.values(r) : []));
  if (resources.length !== 1) throw new Error(`the AppSpec names ${resources.length} resources, not one function`);
  const p = resources[0]?.Properties ?? {};
  const [name, alias] = [p.Name, p.Alias];
  if (resources[0]?.Type !== 'AWS::Lambda::Function' || typeof name !== 'string' || typeof alias !== 'string')
    throw new Error(`the AppSpec's resource is not a Lambda alias: ${JSON.stringify(resources[0])}`);
  const targetVersion = versionOf(p.TargetVersion, 'TargetVersion');
  if (!targetVersion) throw new Error(`the AppSpec names no target version: ${JSON.stringify(p)}`);
  const currentVersion = versionOf(p.CurrentVersion, 'CurrentVersion');
  return { functionName: functionNameOf(name), alias, targetVersion, ...(currentVersion ? { currentVersion } : {}) };
}

/** The plans among `plans` whose check key the secret lacks, as a Failed verdict naming the command; else undefined. */
function missingKeys(keys: CheckKeys, plans: readonly PlanName[], stage: string): Verdict | undefined {
  const missing = plans.filter((p) => !keys.byPlan[p]);
  if (!missing.length) return undefined;
  return {
    status: 'Failed',
    problems: [
      `cannot judge: the check's secret has no key for plan(s) ${missing.join(', ')}: ${issueCheckKeysCommand(stage)}`,
    ],
  };
}

const cannotJudge = (why: string): Verdict => ({ status: 'Failed', problems: [`cannot judge: ${why}`] });

/** Judges the deployment's target version; throws only what the caller reports as Failed. */
export async function checkDeployment(
  event: LifecycleHookEvent,
  ports: PreTrafficPorts,
  config: PreTrafficConfig,
): Promise<Verdict> {
  const routes = config.routes ?? ROUTES;
  const log = (line: string) => ports.log(`pre-traffic check of ${event.DeploymentId}: ${line}`);
  const appSpec = await ports.appSpec(event.DeploymentId);
  // As CodeDeploy sent it, once a run: what the check read its versions from, should they ever surprise.
  log(`AppSpec ${JSON.stringify(appSpec)}`);
  const target = deploymentTarget(appSpec);
  const name = config.functions[target.functionName];
  // Only this stack's functions: the hook has no business judging (or invoking) anything else.
  if (!name) return { status: 'Failed', problems: [`${target.functionName} is not a function of this stack`] };
  const route = routes.find((r) => r.operationId === name);
  if (name !== AUTHORIZER.name && !route)
    return { status: 'Failed', problems: [`no route or authorizer is named ${name}`] };
  // A change or a delete: nothing is sent (it would alter or remove an item that exists, maybe a customer's).
  if (route && (route.does === 'changes' || route.does === 'deletes')) {
    const note =
      `${route.operationId} ${route.does === 'changes' ? 'changes' : 'deletes'} an item that exists, which may be a ` +
      "customer's, so the check sends it nothing; the canary gates and the post-traffic bake judge it";
    log(note);
    return { status: 'Succeeded', problems: [], notes: [note] };
  }
  const invokeTarget = (e: unknown) => ports.invoke(target.functionName, target.targetVersion, e);
  const keys = await ports.checkKeys();
  const authOpts = { keysStage: config.keysStage, methodArn: config.methodArn };
  // The compared pairs go to the two versions by number, never through the alias: an invocation of `live` would
  // count in the canary gates' metrics. CloudFormation starts a deployment only when an alias that exists changes,
  // so the AppSpec names the version `live` is on; without one there is nothing to compare with.
  const current = target.currentVersion;
  const invokeLive = (e: unknown) => ports.invoke(target.functionName, current!, e);
  const noCurrent = () =>
    cannotJudge(
      `the AppSpec names no CurrentVersion to compare the new version ${target.targetVersion} with ` +
        `(the check never compares through the ${config.liveAlias} alias, whose invocations count in the canary gates)`,
    );
  const compare = async (probeAt: (i: number) => Probe, intervalMs: number): Promise<Verdict> => {
    const c = await compareVersions(probeAt, invokeTarget, invokeLive, {
      perVersion: REQUESTS_PER_VERSION,
      concurrency: CONCURRENCY,
      intervalMs,
      now: () => ports.now(),
      sleep: (ms) => ports.sleep(ms),
    });
    for (const n of c.notes ?? []) log(n);
    return c;
  };
  if (name === AUTHORIZER.name) {
    const missing = missingKeys(keys, PLAN_NAMES, config.stage);
    if (missing) return missing;
    if (!current) return noCurrent();
    // Each plan's key and a fresh unknown key in turn (the authorizer has no limiter to pace for).
    const planKeys = PLAN_NAMES.map((p) => [p, keys.byPlan[p]!] as const);
    return compare(authorizerProbeAt(planKeys, authOpts), 0);
  }
  const op = route!;
  const missing = missingKeys(keys, [OPERATIONS_PLAN], config.stage);
  if (missing) return missing;
  if (!writes(op) && !current) return noCurrent();
  // The key's context as the gateway would pass it: the live authorizer's answer for the check's key. One request
  // through the alias (the authorizer's gate sees one more good answer, never a failure of the version judged).
  const authorizerName = Object.entries(config.functions).find(([, n]) => n === AUTHORIZER.name)?.[0];
  if (!authorizerName) return { status: 'Failed', problems: ['the stack names no authorizer'] };
  const allowed = await ports.invoke(
    authorizerName,
    config.liveAlias,
    allowProbe(OPERATIONS_PLAN, keys.byPlan[OPERATIONS_PLAN]!, authOpts).event,
  );
  const auth = authContextOf(allowed);
  if (!auth)
    return cannotJudge(
      `the live authorizer does not allow the check's ${OPERATIONS_PLAN} key (${JSON.stringify(allowed).slice(0, 300)}): ` +
        `if the key was revoked, ${issueCheckKeysCommand(config.stage)}; if the live authorizer is what is broken, ` +
        `ship its fix with break glass: ${BREAK_GLASS}`,
    );
  const opts = { stage: config.stage, auth, runId: event.DeploymentId };
  let existingId: string | undefined;
  if (needsExistingItem(op)) {
    const found = await findExistingItem(op, routes, ports, config, opts, log);
    if (typeof found === 'object') return found;
    existingId = found;
  }
  const itemOpts = { ...opts, ...(existingId ? { existingId } : {}) };
  // A create: sent once, to the new version only, with the check's own key and an Idempotency-Key of the
  // deployment: it makes the check key's own item, nothing a customer owns. Its steady failures are the canary
  // gates' and the bake's to judge.
  if (op.does === 'creates')
    return judgeVersion(operationProbes(op, itemOpts), invokeTarget, CREATE_TRIES, () => ports.sleep(CREATE_RETRY_MS));
  const perMinute = pacedPerMinute(auth.perMinute);
  const intervalMs = 60_000 / Math.max(1, perMinute);
  if (pacedCheckMs(auth.perMinute) > MAX_PACED_MS)
    return {
      status: 'Failed',
      problems: [
        `the check's key (plan ${auth.plan}, ${auth.perMinute} requests a minute) cannot send the ` +
          `${2 * REQUESTS_PER_VERSION} requests of ${op.operationId}'s check within ${MAX_PACED_MS / 60_000} minutes ` +
          `at its share of that budget (${perMinute} a minute): give the check a Business key: ` +
          `${issueCheckKeysCommand(config.stage)} (it issues the check's key of each plan and stores them in its secret)`,
      ],
    };
  const next = await secondPage(op, invokeLive, itemOpts, log);
  if ('failed' in next) return next.failed;
  const probes = operationProbes(op, itemOpts, next.query);
  if (probes.length === 0) return { status: 'Failed', problems: ['no probe for this function: nothing was checked'] };
  return compare((i) => probes[i % probes.length]!, intervalMs);
}

/**
 * The query of a paged list's second page: the next link of a first page of the smallest size, read from the version
 * now live (by number, as the pairs). No query when the operation is no paged list, or when the stage has one page
 * (noted: the cursor is then not sent this time). A live version that answers no first page in FIRST_PAGE_TRIES
 * leaves the cursor unjudged: "cannot judge".
 */
async function secondPage(
  route: Route,
  invokeLive: (event: unknown) => Promise<Outcome>,
  opts: OperationProbeOptions,
  log: (line: string) => void,
): Promise<{ readonly query?: Readonly<Record<string, string>> } | { readonly failed: Verdict }> {
  const first = firstPageSample(route);
  if (!first) return {};
  let why = '';
  for (let i = 0; i < FIRST_PAGE_TRIES; i++) {
    const outcome = await invokeLive(sampleEvent(route, first, opts)).catch((error: unknown): Outcome => ({
      ok: false,
      error,
    }));
    const page = nextPageOf(outcome);
    if ('next' in page) return { query: page.next };
    if ('last' in page) {
      log(
        `${route.operationId}: the stage has one page at ${JSON.stringify(first.query)}, so no second page ` +
          'was asked through a cursor this time',
      );
      return {};
    }
    why = page.unknown;
  }
  return {
    failed: cannotJudge(
      `the live ${route.operationId} answered no first page to take a cursor from (${why}), so its second page ` +
        `cannot be asked; ${BREAK_GLASS_HINT}`,
    ),
  };
}

/**
 * An item the check's key can read, for an operation whose request names one (getPet): read through the `live`
 * alias of the collection's listing (listPets; one request, which the hook's role may invoke already). Its success
 * is then required (200 and a contract body): a version answering 404 to every id fails. Undefined, and the
 * documented 404 accepted besides the success, only when the stage has no item yet (a 200 with an empty page). When
 * the live listing cannot tell (it fails, answers 429), the 404 cannot be told from a broken version: "cannot
 * judge" (a Failed verdict), naming break glass for a fix that must ship while the listing is broken.
 */
async function findExistingItem(
  route: Route,
  routes: readonly Route[],
  ports: PreTrafficPorts,
  config: PreTrafficConfig,
  opts: OperationProbeOptions,
  log: (line: string) => void,
): Promise<string | undefined | Verdict> {
  const listing = existingItemListing(route, routes);
  const physical = listing && Object.entries(config.functions).find(([, n]) => n === listing.operationId)?.[0];
  if (!listing || !physical)
    return cannotJudge(
      `${route.operationId} names an item, and the stack has no listing of its collection to find one, so a ` +
        'version answering 404 to every id could not be told from a good one',
    );
  const outcome = await ports
    .invoke(physical, config.liveAlias, listingEvent(listing, opts))
    .catch((error: unknown): Outcome => ({ ok: false, error }));
  const found = existingItemOf(listing, outcome);
  if ('found' in found) return found.found;
  if ('none' in found) {
    log(`the live ${listing.operationId} lists no item yet: ${route.operationId}'s 404 accepted besides its success`);
    return undefined;
  }
  return cannotJudge(
    `the live ${listing.operationId} could not name an item (${found.unknown}), so ${route.operationId} cannot be ` +
      `held to its success and a version answering 404 to every id would pass; deploy again once ` +
      `${listing.operationId} answers, or, ${BREAK_GLASS_HINT}`,
  );
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
