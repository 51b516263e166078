/**
 * Request validation, the envelope's last step before the handler: the route entry's zod schemas check the query,
 * the path parameters and the body, and the handler's input types are inferred from the same schemas.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { Route } from '../../contract/route-types.ts';
import { clip, describeIssues } from '../../contract/schemas.ts';
import { AppError } from '../domain/errors.ts';
import type { Counted } from '../domain/rate-limit.ts';
import type { AuthContext } from '../domain/keys.ts';

export interface Validated<Q, P, B, H = unknown> {
  readonly query: Q;
  readonly params: P;
  readonly body: B;
  /** The declared request headers, by the names the entry gives them (declared-input.ts). */
  readonly headers: H;
}

export type ApiEvent<Q = unknown, P = unknown, B = unknown, H = unknown> = Omit<APIGatewayProxyEvent, 'body'> & {
  body: unknown;
  validated: Validated<Q, P, B, H>;
  auth: AuthContext;
  /** The limiter's count of this call, set before the handler of an operation counted first (all but plain reads). */
  counted?: Counted;
};

export interface Schemas<Q, P, B> {
  readonly query?: z.ZodMiniType<Q>;
  readonly params?: z.ZodMiniType<P>;
  readonly body?: z.ZodMiniType<B>;
}

export const validate = <Q, P, B>(s: Schemas<Q, P, B>): middy.MiddlewareObj<ApiEvent<Q, P, B>> => ({
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
      if (multi) throw new AppError('validation_failed', `Invalid query: ${clip(multi[0])} is given more than once.`);
    }
    e.validated = {
      query: parse(s.query, e.queryStringParameters, 'query'),
      params: parse(s.params, e.pathParameters, 'path'),
      body: s.body ? parse(s.body, e.body, 'body') : (undefined as B),
      headers: undefined,
    };
  },
});

/** What a request schema validates to; undefined where the route declares none. */
type Validates<R, K extends 'query' | 'params' | 'body' | 'headers'> = R extends { readonly [k in K]: infer S }
  ? S extends z.ZodMiniType
    ? z.output<S>
    : undefined
  : undefined;

export type EventOf<R extends Route> = ApiEvent<
  Validates<R['request'], 'query'>,
  Validates<R['request'], 'params'>,
  Validates<R['request'], 'body'>,
  Validates<R['request'], 'headers'>
>;
