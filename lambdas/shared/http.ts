/**
 * The HTTP envelope every operation Lambda shares, as middy middleware:
 *
 *   Powertools (log context, metrics flush) → api (auth context → the key's expiry and scope → admission
 *   (admission.ts) → deprecation; on the way out: headers, JSON, error mapping) → for an operation with a body: its
 *   checks and the JSON parser (json-body.ts) → validate (validation.ts) → declared request headers and query names
 *   (declared-input.ts) → handler
 *
 * Errors of any kind are mapped here, in one place, to the spec's Error object. Raw errors never leak.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { LIVE_ALIAS } from '../../contract/aliases.ts';
import { BASE_PATH, writes, type Route } from '../../contract/route-types.ts';
import { JSON_HEADERS, UNCOUNTED_RATE_LIMIT_HEADERS } from '../../contract/errors.ts';
// The headers' names only: their documentation stays out of the bundle.
import { headerName } from '../../contract/header-names.ts';
import { assertNotRemoved, deprecationHeaders } from '../domain/deprecation.ts';
import { AppError, UnavailableError } from '../domain/errors.ts';
import { refusalOf } from '../domain/refusal.ts';
import { admissionStateOf, admit, type Admission } from './admission.ts';
import { withDeadline } from '../storage/deadline.ts';
import { declaredInput } from './declared-input.ts';
import type { BodySteps } from './json-body.ts';
import { authContext, header } from './request.ts';
import { requestPathPorts, type Runtime } from './runtime.ts';
import { validate, type ApiEvent, type EventOf, type Schemas } from './validation.ts';

/** Responses to authenticated calls are never cached by intermediaries. */
export const AUTHENTICATED_HEADERS: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store' };

export type { ApiEvent } from './validation.ts';

export interface ApiResult {
  readonly statusCode: number;
  /** Sent as JSON; none (and no Content-Type) when absent, and always on a 204. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

interface Internal extends Record<string, unknown> {
  headers?: Record<string, string>;
  /** A read's admission, still running beside its handler. */
  admission?: Admission;
}

/** What a browser may read of a response: the rate-limit and retry headers, and what the entry's responses send. */
const exposedHeaders = (route: Route): string =>
  [
    ...new Set([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Retry-After',
      ...[...(route.success?.headers ?? []), ...route.errors.flatMap((e) => e.headers ?? [])].map(headerName),
      ...(route.deprecation ? ['Link', 'Deprecation', 'Sunset'] : []),
    ]),
  ].join(', ');

/** CORS: deny by default; an allowed origin (stage config) is echoed back. */
function cors(
  allowed: readonly string[],
  exposed: string,
  event: { headers?: APIGatewayProxyEvent['headers'] },
): Record<string, string> {
  const origin = header(event.headers, 'origin');
  if (!origin || !allowed.includes(origin)) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': exposed, Vary: 'Origin' };
}

/** Headers of a response without a body: JSON's without Content-Type. */
const { 'Content-Type': _json, ...BODILESS_HEADERS } = JSON_HEADERS;

/** How @middy/http-json-body-parser (its @middy/util) reports a prototype key it refused; the key is its cause's data. */
const FORBIDDEN_KEY = 'Forbidden key in JSON body';

/** Maps anything thrown to an AppError. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: number })?.statusCode;
  // The body parser's HTTP errors: a prototype key (`__proto__`, `constructor.prototype`), which for us is an
  // unknown field like any other, refused by name; 415 for a non-JSON content type; 422 for malformed JSON.
  const forbidden = (err as { message?: string; cause?: { data?: unknown } })?.cause?.data;
  if (status === 422 && (err as Error).message === FORBIDDEN_KEY && typeof forbidden === 'string')
    return new AppError('validation_failed', `Invalid body: unknown field "${forbidden.slice(0, 64)}".`);
  if (status === 415) return new AppError('unsupported_media_type');
  if (status === 422 || status === 400) return new AppError('invalid_json');
  // middy's early timeout, just before the function's own: the dependency was too slow, not our bug.
  if ((err as Error)?.name === 'TimeoutError') return new UnavailableError('Deadline');
  return new AppError('internal_error');
}

/** The Error object response for an error, with its headers. */
export function errorResponse(err: AppError, extra: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode: err.status,
    headers: { ...JSON_HEADERS, ...extra, ...err.headers },
    body: JSON.stringify(err.toBody()),
  };
}

/**
 * Logs the failure behind a 5xx (name and message only, never stack traces or request data such as headers or keys)
 * and counts it. A 501 is the contract's answer for an operation not specified yet: counted apart, so the 5xx-rate
 * alarms can leave it out.
 */
function recordFailure(rt: Runtime, route: Route, raw: unknown, err: AppError, context: Context | undefined): void {
  // Under the default dimensions only, the set the 5xx-rate alarms subtract (lib/constructs/server-error-rate.ts),
  // flushed with the invocation's other counts: no dashboard or alarm reads a per-operation set of it (one function
  // answers 501, its own logs name it), and publishing that breakdown at once cost a second EMF line's work.
  if (err.status === 501) rt.telemetry.count('NotImplemented');
  // Every 5xx this function answered, 500 and 503 alike: a version whose limiter or storage calls fail answers 503.
  else if (err.status >= 500) countServerError(rt, route, context);
  if (err.code === 'internal_error') {
    const operation = route.operationId;
    rt.telemetry.count('InternalError', { operation });
    const e = raw as Error | undefined;
    rt.telemetry.log.error('unhandled error', { errorName: e?.name, errorMessage: String(e?.message).slice(0, 200) });
  } else if (err instanceof UnavailableError) {
    rt.telemetry.log.warn('storage unavailable', { reason: String(err.cause) });
    rt.telemetry.count('StorageUnavailable', { reason: String(err.cause) });
  }
}

const api = (
  rt: Runtime,
  route: Route,
): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, Context, Internal> => {
  // Computed once per container, not per request.
  const deprecated = route.deprecation ? deprecationHeaders(route.deprecation) : undefined;
  const admission = admissionStateOf(rt, requestPathPorts(rt));
  // Plain reads start beside the limiter's write; the rest is counted first, a read of the caller's own counts
  // included (its answer must hold its own call). What the route declares it does decides, not its HTTP method.
  const readOnly = route.does === 'reads';
  // What a read-only key is refused (the authorizer allows it the whole stage: only the route knows what it does).
  const call = { changesData: writes(route), method: route.method, path: `${BASE_PATH}${route.path}` };
  const origins = rt.config.CORS_ALLOWED_ORIGINS;
  const exposed = exposedHeaders(route);
  return {
    name: 'api',
    before: async (request) => {
      const event = request.event;
      rt.telemetry.log.debug('request', { operation: route.operationId });
      event.auth = authContext(event as unknown as APIGatewayProxyEvent);
      const headers: Record<string, string> = { ...AUTHENTICATED_HEADERS, ...deprecated };
      request.internal.headers = headers;
      if (deprecated) rt.telemetry.count('DeprecatedOperationCall', { operation: route.operationId });
      if (admission) {
        const counting = admit(rt, admission, event.auth, headers);
        if (readOnly && !counting.refusedLocally) request.internal.admission = counting;
        else event.counted = await counting.done;
      }
      // Refused before any storage, after it is counted (domain/refusal.ts: the count's refusal wins over this).
      const refused = refusalOf(event.auth, Math.floor(rt.now() / 1000), { at: 'call', call });
      if (refused) throw refused;
      if (route.deprecation) assertNotRemoved(route.deprecation, rt.now(), `${route.method} ${route.path}`);
    },
    after: async (request) => {
      // A refused request's read is discarded: the limiter's 429 (or 503) is the answer.
      await request.internal.admission?.done;
      const res = request.response as unknown as ApiResult | AppError;
      if (res instanceof AppError) return answerError(request, res, res);
      const bodiless = res.statusCode === 204 || res.body === undefined;
      request.response = {
        statusCode: res.statusCode,
        headers: {
          ...(bodiless ? BODILESS_HEADERS : JSON_HEADERS),
          ...request.internal.headers,
          ...cors(origins, exposed, request.event),
          ...res.headers,
        },
        body: bodiless ? '' : JSON.stringify(res.body),
      };
    },
    onError: async (request) => {
      // The limiter's answer wins over the read's: a refused request is refused, whatever its read found.
      const refused = await request.internal.admission?.done.then(
        () => undefined,
        (e: unknown) => e,
      );
      if (refused) request.error = refused as Error;
      answerError(request, toAppError(request.error), request.error);
    },
  };
  /** The Error object for `err` (from `raw`), counted and logged as its kind is: a throw's answer, or a return's. */
  function answerError(
    request: middy.Request<ApiEvent, APIGatewayProxyResult, Error, Context, Internal>,
    err: AppError,
    raw: unknown,
  ) {
    recordFailure(rt, route, raw, err, request.context);
    // An error before the limiter ran (e.g. no authorizer context) was not counted: say so, as the gateway does.
    request.response = errorResponse(err, {
      ...UNCOUNTED_RATE_LIMIT_HEADERS,
      ...request.internal.headers,
      ...cors(origins, exposed, request.event),
    });
  }
};

/**
 * Builds an operation's Lambda handler: the shared envelope, then the handler. A handler file calls only this, with
 * its operation's route entry (contract/operations/): the request schemas, and so the handler's input types, come
 * from it. An operation whose entry declares a body passes the body's steps too (json-body.ts): the compiler asks
 * for them, and only that function's bundle carries the JSON parser.
 */
export function apiHandler<R extends Route>(
  rt: Runtime,
  route: R,
  // An AppError returned rather than thrown is answered the same way (its Error object, counted by kind), without
  // the throw and middy's onError chain: an operation whose answer is always an error (a 501) returns it.
  fn: (event: EventOf<R>) => Promise<ApiResult | AppError>,
  ...[body]: R['request'] extends { readonly body: object } ? [body: BodySteps] : []
) {
  const schemas = route.request as Schemas<unknown, unknown, unknown>;
  // Logs and metrics first (Powertools' middlewares: the Lambda context and API Gateway's request id, its
  // x-amzn-RequestId header, on every log line; the ColdStart metric), so the metrics' flush runs last, after the
  // envelope (which may still count the limiter's answer).
  const middlewares = [
    ...rt.telemetry.middlewares(),
    api(rt, route),
    ...(body ?? []),
    validate(schemas),
    declaredInput(route),
  ] as middy.MiddlewareObj[];
  const handler = middy()
    .use(middlewares)
    .handler(fn as never) as unknown as (
    event: APIGatewayProxyEvent,
    context: Context,
  ) => Promise<APIGatewayProxyResult>;
  return (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
    // Storage calls stop RESPONSE_MARGIN_MS before the function's timeout, so the client gets our 503, not silence.
    const left = context?.getRemainingTimeInMillis?.();
    const answer =
      left === undefined
        ? handler(event, context)
        : withDeadline(left - RESPONSE_MARGIN_MS, () => handler(event, context));
    return answer.then((result) => {
      if (!isReadableAnswer(result)) countUnreadable(rt, route, context);
      return result;
    });
  };
}

/**
 * Whether API Gateway can read a proxy answer: an integer status and a string body (or none). It answers anything
 * else 502, and Lambda counts no error for it: only the function can say which version made it.
 */
export function isReadableAnswer(r: unknown): boolean {
  const o = r as APIGatewayProxyResult | undefined;
  return !!o && Number.isInteger(o.statusCode) && (o.body === undefined || typeof o.body === 'string');
}

/** A 502 of ours: counted as the 5xx answers are, per version, for the deploy gates (version-gates.ts). */
function countUnreadable(rt: Runtime, route: Route, context: Context | undefined): void {
  countServerError(rt, route, context);
  // The envelope has flushed this invocation's counts already.
  rt.telemetry.flush();
  rt.telemetry.log.error('unreadable proxy answer', { operation: route.operationId });
}

/**
 * Whether Lambda ran this invocation through the `live` alias (API Gateway's and every customer's), rather than
 * a version invoked directly by its number (the pre-traffic check's): the qualifier of the ARN it was invoked by.
 */
export function throughLiveAlias(context: Pick<Context, 'invokedFunctionArn'> | undefined): boolean {
  // arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]
  return context?.invokedFunctionArn?.split(':')[7] === LIVE_ALIAS;
}

/**
 * A 5xx, per operation and per version, for an invocation through the alias: a deploy's gate compares the version
 * being shifted to with the one it replaces (lib/constructs/version-gates.ts) on exactly these two dimension sets
 * beside the defaults, and divides by Lambda's counts of the alias's invocations. A direct invocation of a version
 * is counted under the defaults alone, with the invocation's other counts: in the gates' sets, the check's failures
 * before the shift would be the new version's while the alias gave it no share yet.
 */
function countServerError(rt: Runtime, route: Route, context: Context | undefined): void {
  const operation = route.operationId;
  if (throughLiveAlias(context))
    rt.telemetry.count('ServerError', { operation, version: context?.functionVersion ?? 'unknown' }, { operation });
  else rt.telemetry.count('ServerError');
}

/** Time kept, after the last storage call is cut off, to map the error, flush metrics and return the response. */
export const RESPONSE_MARGIN_MS = 300;
