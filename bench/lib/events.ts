/** The events the cold-start probe invokes each Lambda with (API Gateway REST v1 proxy / TOKEN authorizer). */
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';

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

/**
 * One event per Lambda name (the handler file's base name), plus the floor's. `petId` must exist in the table.
 * Written per operation, not from the route table: each needs a valid request of its own (the tests' samples live
 * in test/, which the bench does not import), and a new operation fails here by name rather than being skipped.
 */
export function eventFor(name: string, opts: { petId: number; bearer: string }): unknown {
  switch (name) {
    case 'authorizer':
      return {
        type: 'TOKEN',
        authorizationToken: `Bearer ${opts.bearer}`,
        methodArn: `${ARN}/GET/pets`,
      } satisfies APIGatewayTokenAuthorizerEvent;
    case 'list-pets':
      return proxy('GET', '/pets', '/pets', {
        queryStringParameters: { limit: '20' },
        multiValueQueryStringParameters: { limit: ['20'] },
      });
    case 'create-pet':
      return proxy('POST', '/pets', '/pets', {
        headers: { 'Content-Type': 'application/json' },
        multiValueHeaders: { 'Content-Type': ['application/json'] },
        body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
      });
    case 'get-pet':
    case 'floor-handler':
      return proxy('GET', '/pets/{petId}', `/pets/${opts.petId}`, { pathParameters: { petId: String(opts.petId) } });
    case 'list-orders':
      return proxy('GET', '/store/orders', '/store/orders');
    default:
      throw new Error(`no bench event for ${name}`);
  }
}

/** Status codes a healthy invocation returns (the authorizer returns a policy, not a status). */
export const EXPECTED_STATUS: Record<string, number> = {
  'list-pets': 200,
  'create-pet': 201,
  'get-pet': 200,
  'list-orders': 501,
  'floor-handler': 200,
};
