/**
 * Any operation shape is a route entry: a bodiless 204 with a header of its own and no request body is served by
 * the envelope, the local gateway, the OpenAPI document, the docs tables and the typed client with no edit of
 * theirs. The route here is a test's own (no storage: the limiter is off), served through the real envelope.
 */
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { GET_PET } from '../../contract/operations/get-pet.ts';
import { ROUTES, type Route } from '../../contract/routes.ts';
import { result } from '../../client/index.ts';
import { operationsTable, statusesTable } from '../../lib/api/docs-tables.ts';
import { buildOpenApi } from '../../lib/api/openapi.ts';
import { startGateway, type RunningGateway } from '../../lib/local/gateway.ts';
import type { LocalFunction } from '../../lib/local/lambda.ts';
import type { ApiModel } from '../../lib/local/template.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import { apiHandler } from '../../lambdas/shared/http.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { localTableEnv } from '../../lambdas/storage/provision.ts';

/** getPet's path parameter on a path of its own, without a body either way, deprecation or errors of its own. */
const FORGET = {
  ...GET_PET,
  operationId: 'testForgetPet',
  method: 'DELETE',
  path: '/test-only/pets/{petId}',
  summary: 'Forget an animal',
  description: undefined,
  success: {
    status: 204,
    description: 'Forgotten.',
    headers: [{ name: 'X-Forgotten-At', description: 'When.', required: true, schema: { type: 'string' } }],
  },
  errors: [],
  access: { tables: [LIMITER_GRANT] },
  deprecation: undefined,
} as const satisfies Route;

const runtime = createRuntime(
  loadConfig({
    ...localTableEnv('shapes'),
    METRICS: 'off',
    LOG_LEVEL: 'SILENT',
    RATE_LIMITER: 'off',
    CORS_ALLOWED_ORIGINS: 'https://app.example',
  }),
);
const handler = apiHandler(runtime, FORGET, async (event) => ({
  statusCode: 204,
  headers: { 'X-Forgotten-At': `${event.validated.params.petId}` },
}));
const authorizer = { keyId: 'key_test', plan: 'free', perMinute: 60, perDay: 1000 };

let gateway: RunningGateway;
beforeAll(async () => {
  const model: ApiModel = {
    stageName: 'v1',
    methods: [
      { kind: 'lambda', httpMethod: 'DELETE', resourcePath: FORGET.path, apiKeyRequired: false, functionId: 'Fn' },
    ],
    authorizers: new Map(),
    usagePlans: new Map(),
    gatewayResponses: new Map(),
    functions: new Map(),
  };
  const fn: LocalFunction = {
    def: { logicalId: 'Fn', name: FORGET.operationId, environment: {}, timeoutSeconds: 10, memoryMb: 512 },
    // The local gateway's authorizer is not part of this model: the context it would pass is added here.
    handler: (event, context) =>
      handler({ ...(event as any), requestContext: { ...(event as any).requestContext, authorizer } }, context),
    runtime,
  };
  gateway = await startGateway({ model, functions: new Map([['Fn', fn]]) });
});
afterAll(() => gateway?.close());

describe('a bodiless 204 operation', () => {
  it('is answered by the envelope without a body or Content-Type, with its own header exposed to browsers', async () => {
    const res = await handler(
      {
        httpMethod: 'DELETE',
        path: '/test-only/pets/7',
        headers: { Origin: 'https://app.example' },
        pathParameters: { petId: '7' },
        requestContext: { requestId: 'r1', authorizer },
      } as any,
      { getRemainingTimeInMillis: () => 10_000 } as any,
    );
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers?.['Content-Type']).toBeUndefined();
    expect(res.headers).toMatchObject({ 'X-Forgotten-At': '7', 'X-Content-Type-Options': 'nosniff' });
    expect(String(res.headers?.['Access-Control-Expose-Headers']).split(', ')).toContain('X-Forgotten-At');
  });

  it('goes through the local gateway with no Content-Length (RFC 9110, 8.6) and no body', async () => {
    const res = await fetch(`${gateway.url}/test-only/pets/7`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('content-type')).toBeNull();
    expect(res.headers.get('x-forgotten-at')).toBe('7');
    expect(await res.text()).toBe('');
  });

  it('is a success for the typed client, with no data', async () => {
    const raw = createClient<any>({ baseUrl: gateway.url });
    const r = result(await raw.DELETE('/test-only/pets/{petId}', { params: { path: { petId: 7 } } }));
    expect(r.error).toBeUndefined();
    expect(r.data).toBeUndefined();
    expect(r.response.status).toBe(204);
  });

  it('is documented from its entry: a 204 without content, its header in place, no request body', () => {
    const doc = buildOpenApi([...ROUTES, FORGET]) as any;
    const op = doc.paths['/test-only/pets/{petId}'].delete;
    expect(op.requestBody).toBeUndefined();
    expect(op.responses['204'].content).toBeUndefined();
    expect(op.responses['204'].headers['X-Forgotten-At']).toEqual({
      description: 'When.',
      required: true,
      schema: { type: 'string' },
    });
    expect(op.tags).toEqual(['test-only']);
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('test-only');
    const rows = (table: string) => table.split('\n').filter((l) => l.includes('testForgetPet'));
    expect(rows(operationsTable([...ROUTES, FORGET]))).toEqual([
      '| `DELETE /test-only/pets/{petId}` | `testForgetPet` | — | 204 no body with `X-Forgotten-At` | Forget an animal. |',
    ]);
    expect(rows(statusesTable([...ROUTES, FORGET]))).toEqual([
      '| `testForgetPet` | `DELETE /test-only/pets/{petId}` | 204, 400, 401, 403, 413, 429, 431, 500, 503 |',
    ]);
  });
});
