/**
 * The HTTP envelope every operation Lambda shares, as middy middleware:
 *
 *   api (auth context → rate limiter → deprecation → body guard; on the way out: headers, JSON, error mapping)
 *   → @middy/http-json-body-parser → validate (zod) → handler
 *
 * Errors of any kind are mapped here, in one place, to the spec's Error object. Raw errors never leak.
 */
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { Route } from '../../contract/route-types.ts';
import { JSON_HEADERS, UNCOUNTED_RATE_LIMIT_HEADERS } from '../../contract/errors.ts';
import { describeIssues } from '../../contract/schemas.ts';
import { assertNotRemoved, deprecationHeaders } from '../domain/deprecation.ts';
import { AppError, UnavailableError } from '../domain/errors.ts';
import type { AuthContext } from '../domain/keys.ts';
import { enforce, windowsAt, type LimitStore } from '../domain/rate-limit.ts';
import { createLimitStore } from '../storage/limit-store.ts';
import { withUsageHistory } from '../storage/usage-history.ts';
import { withDeadline } from './deadline.ts';
import { authContext, guardBody, header } from './request.ts';
import type { Runtime } from './runtime.ts';

/** Responses to authenticated calls are never cached by intermediaries. */
export const AUTHENTICATED_HEADERS: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store' };

export interface Validated<Q, P, B> {
  readonly query: Q;
  readonly params: P;
  readonly body: B;
}

export type ApiEvent<Q = unknown, P = unknown, B = unknown> = Omit<APIGatewayProxyEvent, 'body'> & {
  body: unknown;
  validated: Validated<Q, P, B>;
  auth: AuthContext;
};

export interface ApiResult {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

interface Internal extends Record<string, unknown> {
  headers?: Record<string, string>;
}

const EXPOSED_HEADERS =
  'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Link, Location, Deprecation, Sunset';

/** CORS: deny by default; an allowed origin (stage config) is echoed back. */
function cors(
  allowed: readonly string[],
  event: { headers?: APIGatewayProxyEvent['headers'] },
): Record<string, string> {
  const origin = header(event.headers, 'origin');
  if (!origin || !allowed.includes(origin)) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS, Vary: 'Origin' };
}

/** Maps anything thrown to an AppError. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: number })?.statusCode;
  // @middy/http-json-body-parser: 415 for a non-JSON content type, 422 for malformed JSON.
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

/** The limiter of a function, recording each key's minute-by-minute history; none when RATE_LIMITER is off. */
function limiterOf(rt: Runtime): LimitStore | undefined {
  if (rt.config.RATE_LIMITER === 'off') return undefined;
  return withUsageHistory(createLimitStore(rt.storage, rt.telemetry), rt.storage, rt.telemetry.log);
}

/** Counts the call against its key's windows; returns the X-RateLimit-* headers, or throws 429/503 with them. */
async function admit(rt: Runtime, limiter: LimitStore, auth: AuthContext, headers: Record<string, string>) {
  const windows = windowsAt(rt.now());
  try {
    Object.assign(headers, await enforce(limiter, auth.keyId, auth, windows));
  } catch (err) {
    if (err instanceof AppError && err.status === 429)
      rt.telemetry.count('RateLimited', { code: err.code }, { plan: auth.plan });
    // The counters cannot be read: nothing is admitted, so nothing is left until the retry.
    if (err instanceof UnavailableError) {
      Object.assign(headers, {
        'X-RateLimit-Limit': String(auth.perMinute),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(windows.minuteReset),
      });
    }
    throw err;
  }
}

/**
 * Logs the failure behind a 5xx (name and message only, never stack traces or request data such as headers or keys)
 * and counts it. A 501 is the contract's answer for an operation not specified yet: counted apart, so the 5xx-rate
 * alarms can leave it out.
 */
function recordFailure(rt: Runtime, route: Route, raw: unknown, err: AppError): void {
  if (err.status === 501) rt.telemetry.count('NotImplemented', { operation: route.operationId });
  else if (err.code === 'internal_error') {
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
  const limiter = limiterOf(rt);
  const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  const origins = rt.config.CORS_ALLOWED_ORIGINS;
  return {
    name: 'api',
    before: async (request) => {
      const event = request.event;
      // API Gateway's request id (its x-amzn-RequestId header) on every log line of this request.
      rt.telemetry.log.setCorrelationId(event.requestContext?.requestId);
      rt.telemetry.log.debug('request', { operation: route.operationId });
      event.auth = authContext(event as unknown as APIGatewayProxyEvent);
      const headers: Record<string, string> = { ...AUTHENTICATED_HEADERS, ...deprecated };
      request.internal.headers = headers;
      if (deprecated) rt.telemetry.count('DeprecatedOperationCall', { operation: route.operationId });
      if (limiter) await admit(rt, limiter, event.auth, headers);
      if (route.deprecation) assertNotRemoved(route.deprecation, rt.now(), `${route.method} ${route.path}`);
      if (hasBody) guardBody(event);
    },
    after: (request) => {
      const res = request.response as unknown as ApiResult;
      request.response = {
        statusCode: res.statusCode,
        headers: { ...JSON_HEADERS, ...request.internal.headers, ...cors(origins, request.event), ...res.headers },
        body: JSON.stringify(res.body),
      };
    },
    onError: (request) => {
      const err = toAppError(request.error);
      recordFailure(rt, route, request.error, err);
      // An error before the limiter ran (e.g. no authorizer context) was not counted: say so, as the gateway does.
      request.response = errorResponse(err, {
        ...UNCOUNTED_RATE_LIMIT_HEADERS,
        ...request.internal.headers,
        ...cors(origins, request.event),
      });
    },
  };
};

interface Schemas<Q, P, B> {
  readonly query?: z.ZodMiniType<Q>;
  readonly params?: z.ZodMiniType<P>;
  readonly body?: z.ZodMiniType<B>;
}

const validate = <Q, P, B>(s: Schemas<Q, P, B>): middy.MiddlewareObj<ApiEvent<Q, P, B>> => ({
  name: 'validate',
  before: (request) => {
    const e = request.event;
    const parse = <T>(schema: z.ZodMiniType<T> | undefined, input: unknown, where: string): T => {
      if (!schema) return undefined as T;
      const r = schema.safeParse(where === 'body' ? input : (input ?? {}));
      if (!r.success) throw new AppError('validation_failed', `Invalid ${where}: ${describeIssues(r.error)}`);
      return r.data;
    };
    if (s.query) {
      // A parameter given twice is ambiguous: reject it rather than pick one.
      const multi = Object.entries(e.multiValueQueryStringParameters ?? {}).find(([, v]) => (v?.length ?? 0) > 1);
      if (multi) throw new AppError('validation_failed', `Invalid query: ${multi[0]} is given more than once.`);
    }
    e.validated = {
      query: parse(s.query, e.queryStringParameters, 'query'),
      params: parse(s.params, e.pathParameters, 'path'),
      body: s.body ? parse(s.body, e.body, 'body') : (undefined as B),
    };
  },
});

/** What a request schema validates to; undefined where the route declares none. */
type Validates<R, K extends 'query' | 'params' | 'body'> = R extends { readonly [k in K]: infer S }
  ? S extends z.ZodMiniType
    ? z.output<S>
    : undefined
  : undefined;

type EventOf<R extends Route> = ApiEvent<
  Validates<R['request'], 'query'>,
  Validates<R['request'], 'params'>,
  Validates<R['request'], 'body'>
>;

/**
 * Builds an operation's Lambda handler: the shared envelope, then the handler. A handler file calls only this, with
 * its operation's route entry (contract/operations/): the request schemas, and so the handler's input types, come
 * from it.
 */
export function apiHandler<R extends Route>(rt: Runtime, route: R, fn: (event: EventOf<R>) => Promise<ApiResult>) {
  const schemas = route.request as Schemas<unknown, unknown, unknown>;
  const flush = () => rt.telemetry.flush();
  const middlewares = [
    api(rt, route),
    { name: 'metrics', after: flush, onError: flush },
    ...(schemas.body ? [httpJsonBodyParser()] : []),
    validate(schemas),
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
    return left === undefined
      ? handler(event, context)
      : withDeadline(left - RESPONSE_MARGIN_MS, () => handler(event, context));
  };
}

/** Time kept, after the last storage call is cut off, to map the error, flush metrics and return the response. */
export const RESPONSE_MARGIN_MS = 300;
