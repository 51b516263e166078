/**
 * An operation that reads the caller's own counts declares `does: 'readsOwnUsage'`, and its answer holds its own
 * call: the envelope counts it before the handler runs and hands the count over. A plain read starts beside its
 * count, so a usage answer built that way would leave its own call out.
 */
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import * as z from 'zod/mini';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import type { Route } from '../../contract/routes.ts';
import { meta } from '../../contract/schemas.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import { apiHandler } from '../../lambdas/shared/http.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';

const Usage = meta(z.object({ counted: z.nullable(z.number()) }), { id: 'TestUsage' });

/** A test-only operation answering what the limiter counted before its handler ran (null: nothing yet). */
const usageRoute = (does: 'reads' | 'readsOwnUsage') =>
  ({
    operationId: `testUsage_${does}`,
    method: 'GET',
    does,
    path: `/test-only/${does}`,
    summary: 'The caller’s own count',
    request: {},
    sample: {},
    success: { status: 200, description: 'The count.', schema: Usage },
    errors: [],
    access: { tables: [LIMITER_GRANT] },
  }) as const satisfies Route;

let runtime: ReturnType<typeof createRuntime>;
beforeAll(async () => {
  const endpoint = inject('dynamoEndpoint');
  const tableEnv = await provisionLocalTables(endpoint, uniquePrefix());
  runtime = createRuntime(
    loadConfig({ ...tableEnv, DYNAMODB_ENDPOINT: endpoint, METRICS: 'off', LOG_LEVEL: 'SILENT' }),
  );
});
afterAll(() => runtime?.storage.ddb.destroy());

/** Calls `route`'s function as the gateway would, for a fresh key of 60 a minute; answers [body, Remaining]. */
async function call(route: Route, keyId: string): Promise<[{ counted: number | null }, number]> {
  const handler = apiHandler(runtime, route, async (event) => ({
    statusCode: 200,
    body: { counted: event.counted?.minuteRemaining ?? null },
  }));
  const res = await handler(
    {
      httpMethod: 'GET',
      path: `/v1${route.path}`,
      headers: {},
      requestContext: { requestId: keyId, authorizer: { keyId, plan: 'free', perMinute: 60, perDay: 1000 } },
    } as any,
    { getRemainingTimeInMillis: () => 10_000 } as any,
  );
  expect(res.statusCode, res.body).toBe(200);
  return [JSON.parse(res.body), Number(res.headers?.['X-RateLimit-Remaining'])];
}

it('a read of the caller’s own counts answers them with its own call counted', async () => {
  const route = usageRoute('readsOwnUsage');
  const key = `key_usage_${Date.now()}`;
  const [first, remaining] = await call(route, key);
  expect(first.counted).toBe(remaining);
  expect(remaining).toBe(59);
  const [second] = await call(route, key);
  expect(second.counted).toBe(58);
});

it('a plain read starts before its count: it has none to answer from', async () => {
  const [body, remaining] = await call(usageRoute('reads'), `key_read_${Date.now()}`);
  expect(body.counted).toBeNull();
  expect(remaining).toBe(59);
});
