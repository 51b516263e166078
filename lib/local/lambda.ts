/**
 * The Lambda side: each function of the template (named by the stack's function metadata) is built in this process
 * from its handler factory and a runtime of its own, and runs with a Lambda context that carries the function's
 * timeout; a handler that throws, returns no valid result or outlives its timeout fails the invocation, as Lambda
 * does.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './intrinsics.ts';
import type { FunctionDef } from './template.ts';
import { LIVE_ALIAS } from '../../contract/aliases.ts';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { AUTHORIZER_HANDLER, OPERATION_HANDLERS } from '../../lambdas/handlers/index.ts';
import type { Runtime } from '../../lambdas/shared/runtime.ts';

export type Handler = (event: unknown, context: Context) => Promise<unknown>;

export interface LocalFunction {
  readonly def: FunctionDef;
  readonly handler: Handler;
  /** What the handler was built on (tests instrument its DynamoDB client). */
  readonly runtime: Runtime;
}

/** The handler factory of the function the stack named `def.name` (its metadata): an operation's, or the authorizer's. */
function factoryOf(def: FunctionDef): (rt: Runtime) => Handler {
  if (def.name === AUTHORIZER.name) return AUTHORIZER_HANDLER as (rt: Runtime) => Handler;
  const route = ROUTES.find((r) => r.operationId === def.name);
  if (!route) throw new Error(`${def.name} (function ${def.logicalId}) is neither an operation nor the authorizer`);
  return OPERATION_HANDLERS[route.operationId] as (rt: Runtime) => Handler;
}

/** Builds each function from its handler factory and the runtime `runtimeOf` composes for it. */
export function buildFunctions(
  defs: Iterable<FunctionDef>,
  runtimeOf: (def: FunctionDef) => Runtime,
): Map<string, LocalFunction> {
  const out = new Map<string, LocalFunction>();
  for (const def of defs) {
    const runtime = runtimeOf(def);
    out.set(def.logicalId, { def, handler: factoryOf(def)(runtime), runtime });
  }
  return out;
}

/**
 * The context Lambda gives an invocation by `qualifier`: the ARN invoked carries it (an alias's name or a version's
 * number), and the version that ran is the one named, or the only one there is locally.
 */
function lambdaContext(def: FunctionDef, deadline: number, qualifier: string): Context {
  const name = def.logicalId;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: /^\d+$/.test(qualifier) ? qualifier : '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${name}:${qualifier}`,
    memoryLimitInMB: String(def.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export type Invocation<T> = { readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: unknown };

/** A function's invocations in progress, the most at once, and how many were throttled. */
export interface Concurrency {
  running: number;
  peak: number;
  throttled: number;
}
const concurrency = new WeakMap<LocalFunction, Concurrency>();

/** The function's concurrency counts (tests and the bench read them). */
export function concurrencyOf(fn: LocalFunction): Concurrency {
  let c = concurrency.get(fn);
  if (!c) concurrency.set(fn, (c = { running: 0, peak: 0, throttled: 0 }));
  return c;
}

/**
 * What Lambda answers an invocation past the function's reserved concurrency: the invoke API's 429
 * TooManyRequestsException (reason ReservedFunctionConcurrentInvocationLimitExceeded), the handler never runs. To
 * API Gateway it is a failed invocation like any other: an authorizer's AUTHORIZER_FAILURE, a proxy integration's
 * 5xx, answered as the stage's gateway responses say.
 */
export function throttledError(): Error {
  return Object.assign(new Error('Rate Exceeded.'), {
    name: 'TooManyRequestsException',
    Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
    statusCode: 429,
  });
}

/**
 * Runs one invocation; a thrown error or the function's timeout is a failed invocation, and so is one past the
 * function's reserved concurrency (throttled before it runs, as Lambda does: each container serves one request at a
 * time, so the invocations in progress are the concurrency). By the `live` alias unless a qualifier is given, as
 * API Gateway invokes every function (a version's number: the pre-traffic check's direct invocations).
 */
export async function invoke<T>(
  fn: LocalFunction,
  event: unknown,
  qualifier: string = LIVE_ALIAS,
): Promise<Invocation<T>> {
  const c = concurrencyOf(fn);
  if (fn.def.reservedConcurrency !== undefined && c.running >= fn.def.reservedConcurrency) {
    c.throttled++;
    return { ok: false, error: throttledError() };
  }
  c.running++;
  c.peak = Math.max(c.peak, c.running);
  try {
    return await run<T>(fn, event, qualifier);
  } finally {
    c.running--;
  }
}

async function run<T>(fn: LocalFunction, event: unknown, qualifier: string): Promise<Invocation<T>> {
  const timeoutMs = fn.def.timeoutSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_r, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${fn.def.timeoutSeconds} seconds`)), timeoutMs);
  });
  try {
    // Lambda hands each invocation its own copy of the event, as JSON: a handler that changes it in place (middy's
    // body parser does) must not change what a caller sends again, as the pre-traffic check's tries do.
    const copy = event === undefined ? event : (JSON.parse(JSON.stringify(event)) as unknown);
    const result = (await Promise.race([
      fn.handler(copy, lambdaContext(fn.def, Date.now() + timeoutMs, qualifier)),
      timeout,
    ])) as T;
    return { ok: true, result };
  } catch (error) {
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
}

/** A Lambda proxy result API Gateway accepts; anything else is a 502. */
export function isProxyResult(r: unknown): r is APIGatewayProxyResult {
  const o = r as APIGatewayProxyResult | undefined;
  return !!o && Number.isInteger(o.statusCode) && (o.body === undefined || typeof o.body === 'string');
}

export interface ProxyRequest {
  readonly requestId: string;
  readonly method: string;
  readonly resourcePath: string;
  readonly path: string;
  readonly stage: string;
  readonly rawHeaders: readonly string[];
  readonly search: URLSearchParams;
  readonly pathParameters: Record<string, string>;
  readonly body: Buffer;
  readonly sourceIp: string;
  readonly userAgent?: string;
  readonly protocol: string;
  readonly authorizer: Record<string, unknown>;
}

function multi(pairs: Iterable<[string, string]>): { single: Record<string, string>; multi: Record<string, string[]> } {
  // Names come from the client: on a plain object `constructor`, `toString` or `__proto__` would find (or set) the
  // prototype's members instead of a list of their own, and the request would fail.
  const single: Record<string, string> = Object.create(null) as Record<string, string>;
  const all: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of pairs) {
    single[k] = v;
    (all[k] ??= []).push(v);
  }
  return { single, multi: all };
}

function headerPairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/** The REST API (payload 1.0) proxy event API Gateway sends. */
export function proxyEvent(r: ProxyRequest): APIGatewayProxyEvent {
  const headers = multi(headerPairs(r.rawHeaders));
  const query = multi(r.search);
  const hasQuery = Object.keys(query.single).length > 0;
  return {
    resource: r.resourcePath,
    path: r.path,
    httpMethod: r.method,
    headers: headers.single,
    multiValueHeaders: headers.multi,
    queryStringParameters: hasQuery ? query.single : null,
    multiValueQueryStringParameters: hasQuery ? query.multi : null,
    pathParameters: Object.keys(r.pathParameters).length ? r.pathParameters : null,
    stageVariables: null,
    body: r.body.length ? r.body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: LOCAL_ACCOUNT,
      apiId: 'local',
      authorizer: r.authorizer,
      httpMethod: r.method,
      identity: {
        sourceIp: r.sourceIp,
        userAgent: r.userAgent ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/${r.stage}${r.path}`,
      protocol: r.protocol,
      requestId: r.requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: r.resourcePath,
      stage: r.stage,
    },
  };
}
