/**
 * The pre-traffic check of a deployment (CodeDeploy's BeforeAllowTraffic hook): before the `live` alias moves any
 * traffic, the NEW version of the function is invoked with known-good requests and its answers are judged against
 * the contract. The canary gates (lib/constructs/version-gates.ts) judge a version by the traffic it gets, and at low
 * traffic they judge nothing (docs/deployment.md, "Gradual deploys"); this check judges every version, whatever the
 * traffic, and stops the ones that answer a good request with a 5xx, a 4xx, a malformed result or a body the
 * contract does not describe, and an authorizer that allows a key onto a usage key no plan of the stage has.
 * A read operation and the authorizer are sent many requests, and so is the version now live, and the new version
 * fails when it fails more of them than the live one (compareVersions): a version that fails a steady share of its
 * requests is stopped too, and failures both versions share (the stage's) stop nothing. A write is sent once: each
 * request makes an item every customer sees.
 *
 * Pure: the requests are built from the route table's samples, and the invocation is a parameter, so the hook's
 * handler (pre-traffic-hook.ts) invokes `<function>:<version>` in AWS and the tests invoke the functions the local
 * emulator builds from the template.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { PLAN_NAMES, STANDARD_PLANS, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import { BASE_PATH, EXISTING_ITEM, type RequestSample, type Route } from '../../contract/routes.ts';
import { ErrorObject } from '../../contract/schemas.ts';
import { generateKey, type AuthContext } from '../domain/keys.ts';
import { LOOK_EVERY, judgeCounts, regressionPValue, type Counts, type Decision } from './pre-traffic-judge.ts';

/** How an invocation of the new version ended: its result, or the error Lambda reported (a throw, a timeout). */
export type Outcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: unknown };

/** One known-good request and how its answer is judged: the problems found, none when the answer is right. */
export interface Probe {
  readonly name: string;
  readonly event: unknown;
  judge(outcome: Outcome): string[];
}

export interface Verdict {
  readonly status: 'Succeeded' | 'Failed';
  /** What was wrong, one line per problem, prefixed by the probe's name (empty when Succeeded). */
  readonly problems: readonly string[];
}

/** Runs every probe against the new version; one problem fails the deployment. */
export async function judgeVersion(
  probes: readonly Probe[],
  invoke: (event: unknown) => Promise<Outcome>,
): Promise<Verdict> {
  if (probes.length === 0) return { status: 'Failed', problems: ['no probe for this function: nothing was checked'] };
  const problems: string[] = [];
  // One after another: the probes of an operation may depend on each other's data, and a handful of requests is
  // quick enough for a hook CodeDeploy waits an hour for.
  for (const probe of probes) {
    let outcome: Outcome;
    try {
      outcome = await invoke(probe.event);
    } catch (error) {
      outcome = { ok: false, error };
    }
    for (const p of probe.judge(outcome)) problems.push(`${probe.name}: ${p}`);
  }
  return { status: problems.length ? 'Failed' : 'Succeeded', problems };
}

/** What the comparison of two versions found: the verdict, and what the log is told besides (failures both share). */
export interface Comparison extends Verdict {
  readonly counts: Counts;
  readonly notes: readonly string[];
}

export interface ComparisonOptions {
  /** Requests sent to each version. */
  readonly perVersion: number;
  /** How many invocations are in flight at once. */
  readonly concurrency: number;
  /** The least time between two invocations' starts (0: none): the check's key's share of its per-minute budget. */
  readonly intervalMs: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** The problems quoted per version when it fails: enough to tell what broke, not the whole run. */
const QUOTED = 5;
/**
 * The rate-limited answers (429) after which the check stops: its key's budget is spent (its day, or another use of
 * it), so the answers judge nothing, and more 429s only bring the key nearer its ban.
 */
export const MAX_RATE_LIMITED = 10;

/** A 429: the limiter refused the check's key, before the version did anything to judge. */
const rateLimited = (outcome: Outcome): boolean =>
  outcome.ok && (outcome.result as { statusCode?: unknown } | null | undefined)?.statusCode === 429;

/**
 * Sends the same `perVersion` requests (`probeAt(i)`: the i-th pair's request) to the new version and to the version
 * now live, interleaved, and judges whether the new one fails more of them (pre-traffic-judge.ts), looking at the
 * counts every LOOK_EVERY pairs, as judgeRun does. A failure is any problem the probe's judge finds: a Lambda error,
 * a result the gateway cannot read, a status or a body off the contract.
 */
export async function compareVersions(
  probeAt: (i: number) => Probe,
  invokeNew: (event: unknown) => Promise<Outcome>,
  invokeOld: (event: unknown) => Promise<Outcome>,
  opts: ComparisonOptions,
): Promise<Comparison> {
  const quoted = { new: new Set<string>(), old: new Set<string>() };
  let counts: Counts = { newFailures: 0, newRequests: 0, oldFailures: 0, oldRequests: 0 };
  // When the next invocation may start: each one at least an interval after the one before, even after a slow
  // stretch, so no minute of the key's limiter gets more than its share.
  let nextStart = opts.now();
  let limited = 0;
  const run = async (probe: Probe, version: 'new' | 'old') => {
    const slot = Math.max(nextStart, opts.now());
    nextStart = slot + opts.intervalMs;
    const wait = slot - opts.now();
    if (wait > 0) await opts.sleep(wait);
    let outcome: Outcome;
    try {
      outcome = await (version === 'new' ? invokeNew : invokeOld)(probe.event);
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (rateLimited(outcome)) {
      limited++;
      return;
    }
    const problems = probe.judge(outcome);
    if (problems.length && quoted[version].size < QUOTED) quoted[version].add(`${probe.name}: ${problems[0]}`);
    counts =
      version === 'new'
        ? {
            ...counts,
            newRequests: counts.newRequests + 1,
            newFailures: counts.newFailures + (problems.length ? 1 : 0),
          }
        : {
            ...counts,
            oldRequests: counts.oldRequests + 1,
            oldFailures: counts.oldFailures + (problems.length ? 1 : 0),
          };
  };
  let decision: Decision = 'undecided';
  for (
    let first = 0;
    first < opts.perVersion && decision !== 'worse' && limited <= MAX_RATE_LIMITED;
    first += LOOK_EVERY
  ) {
    const last = Math.min(opts.perVersion, first + LOOK_EVERY);
    // The look's pairs, new before old in each, `concurrency` invocations in flight.
    const tasks: (() => Promise<void>)[] = [];
    for (let i = first; i < last; i++) {
      const probe = probeAt(i);
      tasks.push(
        () => run(probe, 'new'),
        () => run(probe, 'old'),
      );
    }
    let next = 0;
    const worker = async () => {
      while (next < tasks.length) await tasks[next++]!();
    };
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, tasks.length) }, worker));
    decision = judgeCounts(counts, last >= opts.perVersion);
  }
  const tally = `the new version failed ${counts.newFailures} of ${counts.newRequests} requests, the live version ${counts.oldFailures} of ${counts.oldRequests}`;
  const notes = counts.oldFailures ? [`${tally}; the live version's: ${[...quoted.old].join('; ')}`] : [];
  // Rate-limited answers are neither version's: past a few, too little was judged to let the version through.
  if (decision !== 'worse' && limited > MAX_RATE_LIMITED)
    return {
      status: 'Failed',
      problems: [
        `the check's key was rate-limited (429) on ${limited} requests, so too little was judged (${tally}): its ` +
          `budget is spent; deploy again once its day's budget is back, or give the check a key of a larger plan`,
      ],
      counts,
      notes,
    };
  if (decision !== 'worse') return { status: 'Succeeded', problems: [], counts, notes };
  return {
    status: 'Failed',
    problems: [
      `${tally} (p = ${regressionPValue(counts).toExponential(2)}: more than the live version's count allows)`,
      ...quoted.new,
    ],
    counts,
    notes,
  };
}

const describe = (error: unknown): string => {
  const e = error as { name?: string; message?: string } | undefined;
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`;
};

const safeParse = (schema: unknown, value: unknown) => z.safeParse(schema as z.ZodMiniType, value);

// ---------------------------------------------------------------------------------------------------------------
// Operations

export interface OperationProbeOptions {
  /** The stage name, as the gateway's request context carries it. */
  readonly stage: string;
  /**
   * The authorizer's context of the key the probes are sent with, as the gateway passes it to a function: the
   * check's own key (docs/deployment.md), never a customer's.
   */
  readonly auth: AuthContext;
  /** Names the request, so a retried hook sends the same create (an Idempotency-Key) and makes one item, not two. */
  readonly runId: string;
  /**
   * The id of an item that exists, for a sample that names one (EXISTING_ITEM): the version must answer its success
   * with a contract body. Without one (the stage has no item yet, or its live listing could not be read: see
   * existingItemListing), a fixed id is sent and the operation's documented 404 is accepted as well as its success:
   * the version still has to parse the request, reach its storage and answer a contract body.
   */
  readonly existingId?: string;
}

/** An id no item has been given yet at the scale of this store, and valid for every id parameter (an int64). */
const PROBE_ID = '1';

const IDEMPOTENCY_KEY = 'Idempotency-Key';

/** The request headers the operation declares (a zod object's shape), by name. */
const declaredHeaders = (route: Route): Record<string, unknown> =>
  (route.request.headers as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};

/** The REST API (payload 1.0) proxy event the gateway would send for `sample` on `route`. */
export function sampleEvent(route: Route, sample: RequestSample, opts: OperationProbeOptions): APIGatewayProxyEvent {
  const params = Object.fromEntries(
    Object.entries(sample.params ?? {}).map(([k, v]) => [k, v === EXISTING_ITEM ? (opts.existingId ?? PROBE_ID) : v]),
  ) as Record<string, string>;
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const query = sample.query ?? {};
  const hasQuery = Object.keys(query).length > 0;
  const headers: Record<string, string> = {
    'User-Agent': 'animal-store-pre-traffic-check',
    ...(sample.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    // Declared by the create: a retried hook replays the first create instead of making a second item.
    ...(IDEMPOTENCY_KEY in declaredHeaders(route) ? { [IDEMPOTENCY_KEY]: `pre-traffic-${opts.runId}` } : {}),
  };
  const stagePath = `/${opts.stage}${BASE_PATH}${path}`;
  return {
    resource: `${BASE_PATH}${route.path}`,
    path: `${BASE_PATH}${path}`,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: hasQuery ? { ...query } : null,
    multiValueQueryStringParameters: hasQuery
      ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]]))
      : null,
    pathParameters: Object.keys(params).length ? params : null,
    stageVariables: null,
    body: sample.body === undefined ? null : JSON.stringify(sample.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: 'pre-traffic-check',
      apiId: 'pre-traffic-check',
      // What the gateway passes from the authorizer's Allow (its context, and the principal).
      authorizer: { ...opts.auth, principalId: opts.auth.keyId },
      httpMethod: route.method,
      identity: {
        sourceIp: '127.0.0.1',
        userAgent: headers['User-Agent'],
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: stagePath,
      protocol: 'HTTP/1.1',
      requestId: `pre-traffic-${opts.runId}`,
      requestTimeEpoch: 0,
      resourceId: 'pre-traffic-check',
      resourcePath: `${BASE_PATH}${route.path}`,
      stage: opts.stage,
    },
  };
}

/** The statuses a good version answers the sample with: its success (or 501), and 404 for a guessed item id. */
export function expectedStatuses(route: Route, sample: RequestSample, existingId?: string): number[] {
  const out: number[] = [];
  if (route.notImplemented) out.push(501);
  else if (route.success) out.push(route.success.status);
  const guessed = Object.values(sample.params ?? {}).some((v) => v === EXISTING_ITEM) && existingId === undefined;
  if (guessed && route.errors.some((e) => e.status === 404)) out.push(404);
  return out;
}

/** What is wrong with a proxy answer to a known-good request (none when it is what the contract says). */
export function judgeProxyAnswer(route: Route, expected: readonly number[], outcome: Outcome): string[] {
  if (!outcome.ok) return [`the invocation failed (${describe(outcome.error)})`];
  const r = outcome.result as { statusCode?: unknown; body?: unknown; headers?: unknown } | null | undefined;
  // What API Gateway accepts from a proxy integration; anything else is its 502 to the client.
  if (
    !r ||
    typeof r !== 'object' ||
    !Number.isInteger(r.statusCode) ||
    !(r.body === undefined || typeof r.body === 'string')
  )
    return [`not a proxy result (the gateway would answer 502): ${JSON.stringify(r)?.slice(0, 200)}`];
  if (r.headers !== undefined && (typeof r.headers !== 'object' || r.headers === null))
    return ['not a proxy result: headers is not an object (the gateway would answer 502)'];
  const status = r.statusCode as number;
  const text = typeof r.body === 'string' ? r.body : undefined;
  if (!expected.includes(status))
    return [`answered ${status} to a valid request (expected ${expected.join(' or ')}): ${text?.slice(0, 200) ?? ''}`];
  const noBody = status === 204 || (route.success?.status === status && route.success.schema === undefined);
  if (noBody) return text ? [`answered ${status} with a body, which the contract does not have`] : [];
  let body: unknown;
  try {
    body = JSON.parse(text ?? '');
  } catch {
    return [`answered ${status} with a body that is not JSON: ${text?.slice(0, 200) ?? '(none)'}`];
  }
  if (route.success?.status === status) {
    const parsed = safeParse(route.success.schema, body);
    return parsed.success ? [] : [`its ${status} body is not the contract's: ${parsed.error.message.slice(0, 300)}`];
  }
  // A documented error (501, a guessed item's 404): the error envelope, with one of the codes the contract lists.
  const parsed = z.safeParse(ErrorObject, body);
  if (!parsed.success) return [`its ${status} body is not the error object: ${parsed.error.message.slice(0, 300)}`];
  const codes = route.errors.filter((e) => e.status === status).flatMap((e) => e.codes as readonly string[]);
  const problems: string[] = [];
  if (!codes.includes(parsed.data.code))
    problems.push(`its ${status} code ${parsed.data.code} is not one of ${codes.join(', ')}`);
  if (parsed.data.status !== status) problems.push(`its body says status ${parsed.data.status}, answered ${status}`);
  return problems;
}

/** The operation's probes: its sample and each sample variant, judged against its contract. */
export function operationProbes(route: Route, opts: OperationProbeOptions): Probe[] {
  if (!route.sample) return [];
  const samples: [string, RequestSample][] = [
    [route.operationId, route.sample],
    ...Object.entries(route.sampleVariants ?? {}).map(([n, s]): [string, RequestSample] => [
      `${route.operationId}?${n}`,
      s,
    ]),
  ];
  return samples.map(([name, sample]) => {
    const expected = expectedStatuses(route, sample, opts.existingId);
    return {
      name,
      event: sampleEvent(route, sample, opts),
      judge: (outcome) => judgeProxyAnswer(route, expected, outcome),
    };
  });
}

/** Whether a route's sample names an item that must exist (EXISTING_ITEM): its success needs a real id. */
export const needsExistingItem = (route: Route): boolean =>
  [route.sample, ...Object.values(route.sampleVariants ?? {})].some((s) =>
    Object.values(s?.params ?? {}).some((v) => v === EXISTING_ITEM),
  );

/**
 * The listing that finds an item for such a route: the GET of its collection (`/pets` for `/pets/{petId}`), whose
 * success is a page (an array) of items. The check invokes that operation's `live` alias with its own key, so it
 * reads what a client of the stage reads, through a function its role may invoke already.
 */
export function existingItemListing(route: Route, routes: readonly Route[]): Route | undefined {
  const parent = route.path.replace(/\/\{\w+\}$/, '');
  if (parent === route.path) return undefined;
  return routes.find((r) => r.method === 'GET' && r.path === parent && r.success?.status === 200 && !r.notImplemented);
}

/** The listing request: one item is enough. */
export function listingEvent(listing: Route, opts: OperationProbeOptions): APIGatewayProxyEvent {
  return sampleEvent(listing, { query: { limit: '1' } }, opts);
}

/**
 * What the live listing's answer says about the stage's items: an item's id (`found`), that there is none yet
 * (`none`: a 200 with an empty page), or that it could not tell (`unknown`, with why).
 */
export type ExistingItem = { readonly found: string } | { readonly none: true } | { readonly unknown: string };

export function existingItemOf(listing: Route, outcome: Outcome): ExistingItem {
  if (!outcome.ok) return { unknown: `the invocation failed (${describe(outcome.error)})` };
  const r = outcome.result as { statusCode?: unknown; body?: unknown } | null | undefined;
  if (r?.statusCode !== 200 || typeof r.body !== 'string')
    return { unknown: `it answered ${JSON.stringify(r?.statusCode)}` };
  let body: unknown;
  try {
    body = JSON.parse(r.body);
  } catch {
    return { unknown: 'its body is not JSON' };
  }
  const parsed = safeParse(listing.success?.schema, body);
  if (!parsed.success || !Array.isArray(parsed.data)) return { unknown: "its body is not the contract's page" };
  const id = (parsed.data[0] as { id?: unknown } | undefined)?.id;
  if (parsed.data.length === 0) return { none: true };
  return typeof id === 'number' || typeof id === 'string' ? { found: String(id) } : { unknown: 'its item has no id' };
}

// ---------------------------------------------------------------------------------------------------------------
// The authorizer

export interface AuthorizerProbeOptions {
  /** The check's own key (a key record of a standard plan, issued like any customer's; never a customer's). */
  readonly token: string;
  /** The stage the usage keys are named for (the authorizer's USAGE_KEYS_STAGE, or its STAGE). */
  readonly keysStage: string;
  /** A method ARN of the stage, as the gateway sends it. */
  readonly methodArn: string;
}

/**
 * The API keys the stack creates on the stage: one per plan. A usage key outside them is on no usage plan the stack
 * made, and the gateway answers 403 to every request with it.
 */
export function stagePlanKeys(stage: string): Set<string> {
  return new Set(PLAN_NAMES.map((plan) => planUsageKeyValue(stage, plan)));
}

const stageOf = (methodArn: string) => methodArn.split('/')[1];

/** What is wrong with the authorizer's answer to the check's own key (none when it allows it as the contract says). */
export function judgeAllow(outcome: Outcome, opts: AuthorizerProbeOptions): string[] {
  if (!outcome.ok) return [`the check's key was refused or the invocation failed (${describe(outcome.error)})`];
  const r = outcome.result as Partial<APIGatewayAuthorizerResult> | null | undefined;
  if (!r || typeof r !== 'object') return [`not an authorizer result: ${JSON.stringify(r)?.slice(0, 200)}`];
  const problems: string[] = [];
  if (typeof r.principalId !== 'string' || !r.principalId) problems.push('no principalId');
  const statements = r.policyDocument?.Statement;
  const stmt =
    Array.isArray(statements) && statements.length === 1
      ? (statements[0] as unknown as Record<string, unknown>)
      : undefined;
  const resource = `${opts.methodArn.split('/')[0]}/${stageOf(opts.methodArn)}/*`;
  if (!stmt || stmt.Effect !== 'Allow' || stmt.Action !== 'execute-api:Invoke' || stmt.Resource !== resource)
    problems.push(`the policy is not one Allow of execute-api:Invoke on ${resource}: ${JSON.stringify(statements)}`);
  const ctx = (r.context ?? {}) as Record<string, unknown>;
  const plan = ctx.plan as PlanName;
  if (typeof ctx.keyId !== 'string' || !(Number(ctx.perMinute) > 0) || !(Number(ctx.perDay) > 0))
    problems.push(`the context lacks what every operation reads (keyId, perMinute, perDay): ${JSON.stringify(ctx)}`);
  if (!(STANDARD_PLANS as readonly string[]).includes(plan))
    problems.push(`the check's key is on a standard plan, the context names ${String(ctx.plan)}`);
  const usageKey = r.usageIdentifierKey;
  if (typeof usageKey !== 'string' || !stagePlanKeys(opts.keysStage).has(usageKey))
    problems.push(
      `the usage key ${String(usageKey)} is on no usage plan of stage ${opts.keysStage} (the gateway would answer 403)`,
    );
  else if ((STANDARD_PLANS as readonly string[]).includes(plan) && usageKey !== planUsageKeyValue(opts.keysStage, plan))
    problems.push(`the usage key ${usageKey} is not the ${plan} plan's ${planUsageKeyValue(opts.keysStage, plan)}`);
  return problems;
}

/** An unknown key must be refused with exactly "Unauthorized" (API Gateway's 401); anything else lets it through or fails. */
export function judgeDenial(outcome: Outcome): string[] {
  if (outcome.ok) return [`an unknown key was answered, not refused: ${JSON.stringify(outcome.result)?.slice(0, 200)}`];
  const message = (outcome.error as { message?: unknown } | undefined)?.message;
  return message === 'Unauthorized'
    ? []
    : [`an unknown key failed with "${String(message)}", not "Unauthorized" (a 503)`];
}

const tokenEvent = (token: string, methodArn: string): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  authorizationToken: `Bearer ${token}`,
  methodArn,
});

/** The authorizer's probes: the check's own key is allowed onto its plan's API key, a fresh unknown key is refused. */
export function authorizerProbes(opts: AuthorizerProbeOptions): Probe[] {
  return [
    { name: 'authorizer', event: tokenEvent(opts.token, opts.methodArn), judge: (o) => judgeAllow(o, opts) },
    // A key of the issued form (its check passes) that no one holds: read, found nowhere, refused.
    { name: 'authorizer?unknown-key', event: tokenEvent(generateKey(), opts.methodArn), judge: judgeDenial },
  ];
}

/** The check's key's context as operations receive it, read from the authorizer's Allow (undefined if it is none). */
export function authContextOf(outcome: Outcome): AuthContext | undefined {
  if (!outcome.ok) return undefined;
  const ctx = (outcome.result as APIGatewayAuthorizerResult | undefined)?.context as
    Record<string, unknown> | undefined;
  if (!ctx || typeof ctx.keyId !== 'string') return undefined;
  return {
    keyId: ctx.keyId,
    plan: ctx.plan as PlanName,
    perMinute: Number(ctx.perMinute),
    perDay: Number(ctx.perDay),
    ...(typeof ctx.keyHash === 'string' ? { keyHash: ctx.keyHash } : {}),
  };
}
