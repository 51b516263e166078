/** The events the bench invokes each Lambda with (API Gateway REST v1 proxy / TOKEN authorizer). */
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { AUTHORIZER_OP, ROUTE_OPS, paramsOf, pathOf, type BenchOp } from './bench-ops.ts';

/** The authorizer context the bench key gets (an enterprise-like key with huge limits). */
export const BENCH_AUTH = { keyId: 'key_bench', plan: 'enterprise', perMinute: 600_000, perDay: 864_000_000 } as const;

const ARN = 'arn:aws:execute-api:us-east-1:123456789012:local/v1';

function proxy(
  method: string,
  resource: string,
  path: string,
  extra: Partial<APIGatewayProxyEvent> = {},
): APIGatewayProxyEvent {
  return {
    resource,
    path,
    httpMethod: method,
    headers: { Accept: 'application/json' },
    multiValueHeaders: { Accept: ['application/json'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      authorizer: { ...BENCH_AUTH, principalId: BENCH_AUTH.keyId, integrationLatency: 0 },
      httpMethod: method,
      identity: { sourceIp: '127.0.0.1', userAgent: 'bench' } as APIGatewayProxyEvent['requestContext']['identity'],
      path: `/v1${path}`,
      protocol: 'HTTP/1.1',
      requestId: 'bench-request',
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
      stage: 'v1',
    },
    ...extra,
  };
}

const multi = (values: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, [v]]));

/** A route's sample (or variant) as API Gateway invokes its function; `existingId` an item the bench seeded. */
export function proxyEventOf(o: BenchOp, existingId: number): APIGatewayProxyEvent {
  const params = paramsOf(o.sample, existingId);
  const { query, body } = o.sample;
  // With a body, its Content-Type alone (no Accept), as the bench always sent a create: the figures stay comparable.
  const json = { 'Content-Type': 'application/json' };
  return proxy(o.route.method, o.route.path, pathOf(o.route, params), {
    ...(query ? { queryStringParameters: { ...query }, multiValueQueryStringParameters: multi(query) } : {}),
    ...(Object.keys(params).length ? { pathParameters: params } : {}),
    ...(body === undefined ? {} : { headers: json, multiValueHeaders: multi(json), body: JSON.stringify(body) }),
  });
}

/** The authorizer's TOKEN event for a bearer key, for the route table's first operation. */
export const authorizerEvent = (bearer: string): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  authorizationToken: `Bearer ${bearer}`,
  methodArn: `${ARN}/${ROUTE_OPS[0]!.route.method}${ROUTE_OPS[0]!.route.path}`,
});

/**
 * One event per Lambda bundle (bench/lib/bench-ops.ts names them): its route's sample, or the authorizer's token.
 * `existingId` must name a seeded item (bench/lib/seed.ts). A name no function has fails here by name rather than being skipped.
 */
export function eventFor(name: string, opts: { existingId: number; bearer: string }): unknown {
  if (name === AUTHORIZER_OP.bundle) return authorizerEvent(opts.bearer);
  const o = ROUTE_OPS.find((x) => x.bundle === name && !x.variant);
  if (!o) throw new Error(`no bench event for ${name}`);
  return proxyEventOf(o, opts.existingId);
}

/** The status each function's sample answers, by bundle name (the authorizer returns a policy, not a status). */
export const EXPECTED_STATUS: Readonly<Record<string, number>> = Object.fromEntries(
  ROUTE_OPS.filter((o) => !o.variant).map((o) => [o.bundle, o.expect]),
);
