/**
 * The pre-traffic check (CodeDeploy's BeforeAllowTraffic): before `live` moves, the NEW version gets known-good
 * requests and its answers are judged against the contract. The canary gates judge nothing at low traffic
 * (docs/deployment.md, "Gradual deploys"); this check judges every version.
 * It stops a 5xx, a wrong 4xx, a body or header off the contract, and an authorizer that puts a plan's key on
 * another plan's usage key. What it sends follows the route's `does`, never the HTTP method:
 * - a read, and the authorizer: every sample, enum value and a second page, to both the new and the live version,
 *   compared (compareVersions);
 * - a create: once, to the new version, making the check key's own item (every customer sees it);
 * - a change or a delete: nothing, as the item may be a customer's. The canary gates and the bake judge it.
 * Pure: the invocation is a parameter, so the hook (pre-traffic-hook.ts) and the tests' emulator share it.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { PLAN_NAMES, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import { BASE_PATH, EXISTING_ITEM, type RequestSample, type Route } from '../../contract/routes.ts';
import { headerName } from '../../contract/header-names.ts';
import { RATE_LIMIT_HEADER_NAMES, headerDoc } from '../../contract/headers.ts';
import { ErrorObject, PAGE_SIZE } from '../../contract/schemas.ts';
import { CURSOR_PARAM, PAGE_SIZE_PARAM } from '../domain/pagination.ts';
import { IN_PROGRESS_MS } from '../domain/idempotency.ts';
import { generateKey, type AuthContext } from '../domain/keys.ts';
import {
  EMPTY_TALLY,
  LIVE_FLOOR,
  LOOK_EVERY,
  addPair,
  floorOf,
  judgeTally,
  regressionPValue,
  scorePair,
  type Answer,
  type RunDecision,
  type Tally,
} from './pre-traffic-judge.ts';

/** How an invocation of the new version ended: its result, or the error Lambda reported (a throw, a timeout). */
export type Outcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: unknown };

/** One known-good request and how its answer is judged: the problems found, none when the answer is right. */
export interface Probe {
  readonly name: string;
  readonly event: unknown;
  judge(outcome: Outcome): string[];
  /**
   * Response headers the operation declares (its success's, the rate-limit ones): in a compared pair, one the live
   * version sent and the new one left out of the same answer is the new version's failure.
   */
  readonly headers?: readonly string[];
}

export interface Verdict {
  readonly status: 'Succeeded' | 'Failed';
  /** What was wrong, one line per problem, prefixed by the probe's name (empty when Succeeded). */
  readonly problems: readonly string[];
  /** What the log is told besides: failures both versions share, what was not sent and why. */
  readonly notes?: readonly string[];
}

/**
 * Runs every probe against the new version alone; a probe that fails `tries` times running fails the deployment. An
 * invocation that throws (the hook's own call failed, not the version) judges nothing: "cannot judge". A write's one
 * request is tried up to CREATE_TRIES times (the same request and Idempotency-Key, so one item at most): a single
 * failure is as likely the stage's background (a throttled table, a flood's 503s) as the release's, and failing on it
 * would roll back good releases at the background rate (7 % in a customer flood). A version that fails every request
 * still fails every try; a steady share of failures is the bake's to judge. `pause` runs between tries: a try that
 * crashed leaves its Idempotency-Key claimed for IN_PROGRESS_MS, and the next must wait it out, or it is told 409.
 */
export async function judgeVersion(
  probes: readonly Probe[],
  invoke: (event: unknown) => Promise<Outcome>,
  tries = 1,
  pause: () => Promise<void> = async () => undefined,
): Promise<Verdict> {
  if (probes.length === 0) return { status: 'Failed', problems: ['no probe for this function: nothing was checked'] };
  const problems: string[] = [];
  // One after another: the probes of an operation may depend on each other's data, and a handful of requests is
  // quick enough for a hook CodeDeploy waits an hour for.
  for (const probe of probes) {
    let last: string[] = [];
    for (let t = 0; t < tries; t++) {
      if (t > 0) await pause();
      let outcome: Outcome;
      try {
        outcome = await invoke(probe.event);
      } catch (error) {
        last = [`cannot judge: ${probe.name}: the hook could not invoke the new version (${describe(error)})`];
        continue;
      }
      const tried = tries > 1 ? ` (${t + 1} of ${tries} tries)` : '';
      last = probe.judge(outcome).map((p) => `${probe.name}: ${p}${tried}`);
      if (last.length === 0) break;
    }
    problems.push(...last);
  }
  return { status: problems.length ? 'Failed' : 'Succeeded', problems };
}

/** Tries of a write's one request before it fails the deployment (judgeVersion). */
export const CREATE_TRIES = 3;
/** The wait between two tries: past the claim a crashed try leaves on its Idempotency-Key. */
export const CREATE_RETRY_MS = IN_PROGRESS_MS + 1_000;

/** What the comparison of two versions found: the verdict, and what the log is told besides (failures both share). */
export interface Comparison extends Verdict {
  readonly decision: RunDecision;
  readonly counts: Tally;
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

/** The flag a deploy takes to skip the release checks, for the one deploy that ships a fix while live is broken. */
export const BREAK_GLASS = '-c animal-store:breakGlass="<reason>"';
export const BREAK_GLASS_HINT = `to ship a fix while the live version is broken, deploy it with break glass: ${BREAK_GLASS}`;

/** A 429: the limiter refused the check's key, before the version did anything to judge. */
const rateLimited = (outcome: Outcome): boolean =>
  outcome.ok && (outcome.result as { statusCode?: unknown } | null | undefined)?.statusCode === 429;

/** An answer's headers by lower-cased name (both maps of a proxy result). */
function headersOf(outcome: Outcome): Set<string> {
  if (!outcome.ok) return new Set();
  const r = outcome.result as { headers?: unknown; multiValueHeaders?: unknown } | null | undefined;
  const names = [r?.headers, r?.multiValueHeaders].flatMap((h) =>
    h && typeof h === 'object' ? Object.keys(h).map((k) => k.toLowerCase()) : [],
  );
  return new Set(names);
}

const statusOf = (outcome: Outcome): unknown =>
  outcome.ok ? (outcome.result as { statusCode?: unknown } | null | undefined)?.statusCode : undefined;

/**
 * The declared headers the live version sent with an answer and the new one left out of the same answer: a client
 * reading them (the next page's link, the rate-limit headers) would break on the new version.
 */
export function droppedHeaders(declared: readonly string[], newOutcome: Outcome, oldOutcome: Outcome): string[] {
  if (statusOf(newOutcome) !== statusOf(oldOutcome)) return [];
  const [got, had] = [headersOf(newOutcome), headersOf(oldOutcome)];
  return declared.filter((h) => had.has(h.toLowerCase()) && !got.has(h.toLowerCase()));
}

/** One version's side of a pair: how it counts, and its first problem (for the log). */
interface Side {
  readonly answer: Answer;
  readonly problem?: string;
}

function sideOf(probe: Probe, outcome: Outcome | 'lost'): Side {
  if (outcome === 'lost') return { answer: 'lost' };
  if (rateLimited(outcome)) return { answer: 'limited', problem: 'answered 429 (rate-limited)' };
  const problems = probe.judge(outcome);
  return problems.length ? { answer: 'failed', problem: problems[0] } : { answer: 'ok' };
}

/**
 * Sends the same `perVersion` requests (`probeAt(i)`: the i-th pair's request) to the new version and to the version
 * now live, interleaved, and judges whether the new one fails more of them (pre-traffic-judge.ts), on judgeRun's
 * schedule: the floor after each pair, a look every LOOK_EVERY pairs. A failure is any problem the probe's judge
 * finds (a Lambda error, a result the gateway cannot read, a status or a body off the contract), a 429 the other
 * version of the pair did not answer, or a declared header the live version sent and the new one did not. An
 * invocation that throws (`invoke*` rejects: the hook's own call failed, not the version) judges neither.
 */
export async function compareVersions(
  probeAt: (i: number) => Probe,
  invokeNew: (event: unknown) => Promise<Outcome>,
  invokeOld: (event: unknown) => Promise<Outcome>,
  opts: ComparisonOptions,
): Promise<Comparison> {
  const quoted = { new: new Set<string>(), old: new Set<string>() };
  const lostErrors = new Set<string>();
  let tally: Tally = EMPTY_TALLY;
  // When the next invocation may start: each one at least an interval after the one before, even after a slow
  // stretch, so no minute of the key's limiter gets more than its share.
  let nextStart = opts.now();
  let stopped: RunDecision | undefined;
  const pending = new Map<number, Outcome | 'lost'>();
  const settle = (probe: Probe, newOutcome: Outcome | 'lost', oldOutcome: Outcome | 'lost') => {
    let n = sideOf(probe, newOutcome);
    const o = sideOf(probe, oldOutcome);
    if (n.answer === 'ok' && o.answer === 'ok' && newOutcome !== 'lost' && oldOutcome !== 'lost') {
      const dropped = droppedHeaders(probe.headers ?? [], newOutcome, oldOutcome);
      if (dropped.length)
        n = { answer: 'failed', problem: `left out ${dropped.join(', ')}, which the live version sent` };
    }
    tally = addPair(tally, n.answer, o.answer);
    if (scorePair(n.answer, o.answer)) {
      if (n.problem && quoted.new.size < QUOTED) quoted.new.add(`${probe.name}: ${n.problem}`);
      if (o.problem && quoted.old.size < QUOTED) quoted.old.add(`${probe.name}: ${o.problem}`);
    }
    if (!stopped && floorOf(tally, opts.perVersion, false)) stopped = 'cannot-judge';
  };
  const run = async (i: number, probe: Probe, version: 'new' | 'old') => {
    if (stopped) return;
    const slot = Math.max(nextStart, opts.now());
    nextStart = slot + opts.intervalMs;
    const wait = slot - opts.now();
    if (wait > 0) await opts.sleep(wait);
    if (stopped) return;
    let outcome: Outcome | 'lost';
    try {
      outcome = await (version === 'new' ? invokeNew : invokeOld)(probe.event);
    } catch (error) {
      outcome = 'lost';
      if (lostErrors.size < QUOTED) lostErrors.add(describe(error));
    }
    const other = pending.get(i);
    if (other === undefined) {
      pending.set(i, outcome);
      return;
    }
    pending.delete(i);
    if (version === 'new') settle(probe, outcome, other);
    else settle(probe, other, outcome);
  };
  let decision: RunDecision | 'undecided' = 'undecided';
  for (let first = 0; first < opts.perVersion && !stopped && decision !== 'worse'; first += LOOK_EVERY) {
    const last = Math.min(opts.perVersion, first + LOOK_EVERY);
    // The look's pairs, new before old in each, `concurrency` invocations in flight.
    const tasks: (() => Promise<void>)[] = [];
    for (let i = first; i < last; i++) {
      const probe = probeAt(i);
      tasks.push(
        () => run(i, probe, 'new'),
        () => run(i, probe, 'old'),
      );
    }
    let next = 0;
    const worker = async () => {
      while (next < tasks.length && !stopped) await tasks[next++]!();
    };
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, tasks.length) }, worker));
    if (!stopped) decision = judgeTally(tally, opts.perVersion, last >= opts.perVersion);
  }
  if (stopped) decision = stopped;
  const final: RunDecision = decision === 'undecided' ? 'not-worse' : decision;
  const judged = tally.newRequests;
  const counts = `the new version failed ${tally.newFailures} of ${judged} judged requests, the live version ${tally.oldFailures} of ${tally.oldRequests}`;
  const unjudged =
    tally.bothLimited + tally.lost
      ? `; ${tally.bothLimited} pairs both answered 429 and ${tally.lost} were lost to the hook's own invocation failing`
      : '';
  const tallyText = `${counts}${unjudged}`;
  const liveQuoted = quoted.old.size ? `; the live version's: ${[...quoted.old].join('; ')}` : '';
  const notes = tally.oldFailures || unjudged ? [`${tallyText}${liveQuoted}`] : [];
  const base = { decision: final, counts: tally, notes };
  if (final === 'worse')
    return {
      ...base,
      status: 'Failed',
      problems: [
        `${tallyText} (p = ${regressionPValue(tally).toExponential(2)}: more than the live version's count allows)`,
        ...quoted.new,
      ],
    };
  if (final === 'not-worse') return { ...base, status: 'Succeeded', problems: [] };
  const floor = floorOf(tally, opts.perVersion, true);
  const why =
    floor && 'unjudged' in floor
      ? `only ${judged} of ${opts.perVersion} pairs could be judged (${tallyText}` +
        (lostErrors.size ? `: ${[...lostErrors].join('; ')}` : '') +
        "): when both versions answer 429 the check's key's budget is spent (deploy again once its day's budget " +
        "is back, or give the check a key of a larger plan); when the hook's invocations fail, deploy again"
      : `the live version itself failed more than ${LIVE_FLOOR * 100} % of the requests judged (${tallyText}` +
        `${liveQuoted}), so a new version failing alike would pass; ${BREAK_GLASS_HINT}`;
  return { ...base, status: 'Failed', problems: [`cannot judge: ${why}`] };
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
  // A success without a header its contract requires (a create's Location): judged on every answer, paired or not.
  if (route.success?.status === status) {
    const sent = new Set(Object.keys((r.headers ?? {}) as object).map((h) => h.toLowerCase()));
    const missing = (route.success.headers ?? [])
      .map(headerDoc)
      .filter((h) => h.required && !sent.has(h.name.toLowerCase()));
    if (missing.length)
      return [`its ${status} answer lacks ${missing.map((h) => h.name).join(', ')}, which the contract requires`];
  }
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

/** The values a schema allows when it allows a few (an enum, a literal, optional or not), as query strings. */
export function enumValues(schema: unknown): string[] {
  const values = (schema as { _zod?: { values?: ReadonlySet<unknown> } } | undefined)?._zod?.values;
  return values ? [...values].filter((v) => v !== undefined && v !== null).map(String) : [];
}

/** The query parameters the operation declares (a zod object's shape), by name. */
const queryShape = (route: Route): Record<string, unknown> =>
  (route.request.query as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};

/** Whether the operation's success is a page that announces the next one (`Link: rel="next"`). */
export const paged = (route: Route): boolean => route.success?.headers?.includes('LinkNext') ?? false;

/** The response headers the operation declares for its success, and the rate-limit headers every answer carries. */
export const declaredResponseHeaders = (route: Route): string[] => [
  ...(route.success?.headers ?? []).map(headerName),
  ...RATE_LIMIT_HEADER_NAMES,
];

/**
 * The requests customers send the operation, by name: its sample and sample variants, the sample with each value
 * of each query parameter that takes a few (every `status`), and, for a paged list, a first page of the smallest
 * size (so a stage of two items has a next page to announce). Named `<operationId>?<what>`; the same request once.
 */
export function operationSamples(route: Route): [string, RequestSample][] {
  if (!route.sample) return [];
  const out: [string, RequestSample][] = [
    [route.operationId, route.sample],
    ...Object.entries(route.sampleVariants ?? {}).map(([n, s]): [string, RequestSample] => [
      `${route.operationId}?${n}`,
      s,
    ]),
  ];
  const shape = queryShape(route);
  for (const [param, schema] of Object.entries(shape))
    for (const value of enumValues(schema))
      out.push([
        `${route.operationId}?${param}=${value}`,
        { ...route.sample, query: { ...route.sample.query, [param]: value } },
      ]);
  if (paged(route) && PAGE_SIZE_PARAM in shape)
    out.push([
      `${route.operationId}?${PAGE_SIZE_PARAM}=${PAGE_SIZE.min}`,
      { ...route.sample, query: { ...route.sample.query, [PAGE_SIZE_PARAM]: String(PAGE_SIZE.min) } },
    ]);
  const seen = new Set<string>();
  return out.filter(([, s]) => {
    const key = JSON.stringify([s.params, Object.entries(s.query ?? {}).sort(), s.body]);
    return !seen.has(key) && !!seen.add(key);
  });
}

/** The first page a second one is asked after: the paged list's sample at the smallest size. */
export function firstPageSample(route: Route): RequestSample | undefined {
  if (!route.sample || !paged(route) || !(PAGE_SIZE_PARAM in queryShape(route))) return undefined;
  return { ...route.sample, query: { ...route.sample.query, [PAGE_SIZE_PARAM]: String(PAGE_SIZE.min) } };
}

/**
 * What a first page says of the next: its `Link: rel="next"` as the query of the next page's request (`next`),
 * that there is none (`last`: the stage has one page), or that the answer was no page (`unknown`, with why).
 */
export type NextPage =
  { readonly next: Readonly<Record<string, string>> } | { readonly last: true } | { readonly unknown: string };

export function nextPageOf(outcome: Outcome): NextPage {
  if (!outcome.ok) return { unknown: `the invocation failed (${describe(outcome.error)})` };
  const r = outcome.result as { statusCode?: unknown; headers?: Record<string, unknown> } | null | undefined;
  if (r?.statusCode !== 200) return { unknown: `it answered ${JSON.stringify(r?.statusCode)}` };
  const link = Object.entries(r.headers ?? {}).find(([k]) => k.toLowerCase() === 'link')?.[1];
  if (link === undefined) return { last: true };
  const m = /^<([^>]*)>;\s*rel="next"$/.exec(String(link));
  if (!m) return { unknown: `its Link is not one rel="next": ${String(link).slice(0, 200)}` };
  const query = Object.fromEntries(new URL(m[1]!, 'https://link.invalid').searchParams);
  return CURSOR_PARAM in query ? { next: query } : { unknown: `its next link has no ${CURSOR_PARAM}: ${m[1]}` };
}

/**
 * The operation's probes: each request customers send (operationSamples), and the second page when `nextPage`
 * (the query of a live first page's next link) is given, each judged against its contract.
 */
export function operationProbes(
  route: Route,
  opts: OperationProbeOptions,
  nextPage?: Readonly<Record<string, string>>,
): Probe[] {
  const samples = operationSamples(route);
  if (nextPage && route.sample)
    samples.push([`${route.operationId}?${CURSOR_PARAM}`, { ...route.sample, query: nextPage }]);
  const headers = declaredResponseHeaders(route);
  return samples.map(([name, sample]) => {
    const expected = expectedStatuses(route, sample, opts.existingId);
    return {
      name,
      event: sampleEvent(route, sample, opts),
      judge: (outcome) => judgeProxyAnswer(route, expected, outcome),
      headers,
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
  return routes.find((r) => r.does === 'reads' && r.path === parent && r.success?.status === 200 && !r.notImplemented);
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

/**
 * What is wrong with the authorizer's answer to the check's own key of `plan` (none when it allows it as the
 * contract says: onto that plan's API key, with that plan in its context).
 */
export function judgeAllow(outcome: Outcome, plan: PlanName, opts: AuthorizerProbeOptions): string[] {
  if (!outcome.ok) return [`the check's ${plan} key was refused or the invocation failed (${describe(outcome.error)})`];
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
  if (typeof ctx.keyId !== 'string' || !(Number(ctx.perMinute) > 0) || !(Number(ctx.perDay) > 0))
    problems.push(`the context lacks what every operation reads (keyId, perMinute, perDay): ${JSON.stringify(ctx)}`);
  if (ctx.plan !== plan) problems.push(`the check's ${plan} key's context names plan ${String(ctx.plan)}`);
  const usageKey = r.usageIdentifierKey;
  const expected = planUsageKeyValue(opts.keysStage, plan);
  if (typeof usageKey !== 'string' || !stagePlanKeys(opts.keysStage).has(usageKey))
    problems.push(
      `the ${plan} key's usage key ${String(usageKey)} is on no usage plan of stage ${opts.keysStage} (the gateway would answer 403)`,
    );
  else if (usageKey !== expected)
    problems.push(`the ${plan} key's usage key ${usageKey} is not the ${plan} plan's ${expected}`);
  return problems;
}

/** An unknown key must be refused with exactly "Unauthorized" (API Gateway's 401); else it gets through or fails. */
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

/** The check's own key of `plan` must be allowed onto that plan's API key. */
export function allowProbe(plan: PlanName, token: string, opts: AuthorizerProbeOptions): Probe {
  return {
    name: `authorizer?${plan}`,
    event: tokenEvent(token, opts.methodArn),
    judge: (o) => judgeAllow(o, plan, opts),
  };
}

/** A key of the issued form (its check passes) that no one holds, fresh each call: read, found nowhere, refused. */
export function unknownKeyProbe(opts: AuthorizerProbeOptions): Probe {
  return { name: 'authorizer?unknown-key', event: tokenEvent(generateKey(), opts.methodArn), judge: judgeDenial };
}

/**
 * The authorizer's i-th request: each plan's key in turn (`keys`: the plans the stage sells, each with the check's
 * key of that plan), a fresh unknown key between two of them.
 */
export function authorizerProbeAt(
  keys: readonly (readonly [PlanName, string])[],
  opts: AuthorizerProbeOptions,
): (i: number) => Probe {
  const allows = keys.map(([plan, token]) => allowProbe(plan, token, opts));
  return (i) => (i % 2 === 0 ? allows[(i / 2) % allows.length]! : unknownKeyProbe(opts));
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
    // Passed on as the authorizer gave them, so the versions compared see the check key's scope and expiry.
    ...(ctx.scope === 'read' || ctx.scope === 'all' ? { scope: ctx.scope } : {}),
    ...(typeof ctx.validUntil === 'number' ? { validUntil: ctx.validUntil } : {}),
  };
}
