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
import { routeOf, type OperationId, type Route, type RouteOf } from '../../contract/routes.ts';
import { UNCOUNTED_RATE_LIMIT_HEADERS } from '../../contract/gateway-responses.ts';
import { assertNotRemoved, deprecationHeaders } from '../domain/deprecation.ts';
import { AppError, UnavailableError } from '../domain/errors.ts';
import type { AuthContext } from '../domain/keys.ts';
import { enforce, windowsAt, type LimitStore } from '../domain/rate-limit.ts';
import { MAX_BODY_BYTES, describeIssues } from '../../contract/schemas.ts';
import { now } from './clock.ts';
import { config } from './config.ts';
import { withDeadline } from './deadline.ts';
import { countMetric, flushMetrics, logger } from './observability.ts';

/** Headers every response carries. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'X-Content-Type-Options': 'nosniff',
};
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

/** Reads the authorizer's context; an event without one never reaches a handler (defence in depth). */
function authContext(event: APIGatewayProxyEvent): AuthContext {
  const a = event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
  const perMinute = Number(a?.perMinute);
  const perDay = Number(a?.perDay);
  if (!a || typeof a.keyId !== 'string' || !(perMinute > 0) || !(perDay > 0)) throw new AppError('unauthorized');
  return { keyId: a.keyId, plan: a.plan as AuthContext['plan'], perMinute, perDay };
}

function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (k.toLowerCase() === lower) return v ?? undefined;
  return undefined;
}

/** No NewPet needs more than a few levels; deeper bodies are refused before the parser recurses into them. */
const MAX_JSON_DEPTH = 32;

/** The deepest `{`/`[` nesting in a JSON text, ignoring brackets inside strings (stops counting past the cap). */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length && max <= MAX_JSON_DEPTH; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** CORS: deny by default; an allowed origin (stage config) is echoed back. */
function cors(event: { headers?: APIGatewayProxyEvent['headers'] }): Record<string, string> {
  const origin = header(event as APIGatewayProxyEvent, 'origin');
  if (!origin || !config.CORS_ALLOWED_ORIGINS.includes(origin)) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers':
      'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Link, Location, Deprecation, Sunset',
    Vary: 'Origin',
  };
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
    headers: { ...BASE_HEADERS, ...extra, ...err.headers },
    body: JSON.stringify(err.toBody()),
  };
}

export interface ApiOptions {
  readonly limitStore: LimitStore;
}

const api = (
  route: Route,
  { limitStore }: ApiOptions,
): middy.MiddlewareObj<ApiEvent, APIGatewayProxyResult, Error, Context, Internal> => {
  // Computed once per container, not per request.
  const deprecated = route.deprecation ? deprecationHeaders(route.deprecation) : undefined;
  return {
    name: 'api',
    before: async (request) => {
      const event = request.event;
      // API Gateway's request id (its x-amzn-RequestId header) on every log line of this request.
      logger.setCorrelationId((event as unknown as APIGatewayProxyEvent).requestContext?.requestId);
      logger.debug('request', { operation: route.operationId });
      const auth = authContext(event as unknown as APIGatewayProxyEvent);
      event.auth = auth;
      const headers: Record<string, string> = { ...AUTHENTICATED_HEADERS };
      request.internal.headers = headers;
      if (deprecated) {
        Object.assign(headers, deprecated);
        countMetric('DeprecatedOperationCall', { operation: route.operationId });
      }
      if (config.RATE_LIMITER === 'on') {
        const windows = windowsAt(now());
        try {
          Object.assign(headers, await enforce(limitStore, auth.keyId, auth, windows));
        } catch (err) {
          if (err instanceof AppError && err.status === 429)
            countMetric('RateLimited', { code: err.code }, { plan: auth.plan });
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
      if (route.deprecation) assertNotRemoved(route.deprecation, now(), `${route.method} ${route.path}`);
      if (route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH') {
        const raw = event.body;
        const size = typeof raw === 'string' ? Buffer.byteLength(raw, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
        if (size > MAX_BODY_BYTES)
          throw new AppError('payload_too_large', `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
        if (raw === null || raw === undefined || raw === '')
          throw new AppError('validation_failed', 'A JSON request body is required.');
        if (typeof raw === 'string' && nestingDepth(raw) > MAX_JSON_DEPTH) {
          throw new AppError('validation_failed', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
        }
        // Normalise the header name for the body parser, which looks at `content-type` or `Content-Type` only.
        const ct = header(event as unknown as APIGatewayProxyEvent, 'content-type');
        event.headers = { ...event.headers, 'content-type': ct };
      }
    },
    after: (request) => {
      const res = request.response as unknown as ApiResult;
      request.response = {
        statusCode: res.statusCode,
        headers: { ...BASE_HEADERS, ...request.internal.headers, ...cors(request.event), ...res.headers },
        body: JSON.stringify(res.body),
      };
    },
    onError: (request) => {
      const err = toAppError(request.error);
      if (err.code === 'internal_error') {
        // Name and message only: stack traces and request data (headers, keys) never reach the logs.
        const e = request.error as Error | undefined;
        logger.error('unhandled error', { errorName: e?.name, errorMessage: String(e?.message).slice(0, 200) });
      } else if (err instanceof UnavailableError) {
        logger.warn('storage unavailable', { reason: String(err.cause) });
        countMetric('StorageUnavailable', { reason: String(err.cause) });
      }
      // An error before the limiter ran (e.g. no authorizer context) was not counted: say so, as the gateway does.
      request.response = errorResponse(err, {
        ...UNCOUNTED_RATE_LIMIT_HEADERS,
        ...request.internal.headers,
        ...cors(request.event),
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

type EventOf<I extends OperationId> = ApiEvent<
  Validates<RouteOf<I>['request'], 'query'>,
  Validates<RouteOf<I>['request'], 'params'>,
  Validates<RouteOf<I>['request'], 'body'>
>;

/**
 * Builds an operation's Lambda handler: the shared envelope, then the handler. A handler file calls only this; the
 * request schemas, and so the handler's input types, come from the operation's route.
 */
export function apiHandler<I extends OperationId>(
  operationId: I,
  options: ApiOptions,
  fn: (event: EventOf<I>) => Promise<ApiResult>,
) {
  const route = routeOf(operationId);
  const schemas = route.request as Schemas<unknown, unknown, unknown>;
  const middlewares = [
    api(route, options),
    { name: 'metrics', after: flushMetrics, onError: flushMetrics },
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
