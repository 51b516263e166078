/**
 * Starts the local API (the same gateway `npm start` runs) on the shared DynamoDB Local, with tables of its own and
 * a clock the test can move.
 */
import { randomBytes } from 'node:crypto';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { inject } from 'vitest';
import type { PlanName } from '../../contract/plans.ts';
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../lib/local/app.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { localStorage } from '../../lambdas/storage/provision.ts';
import { createTelemetry, type Telemetry } from '../../lambdas/shared/observability.ts';
import { checkResponse } from './contract.ts';
import { testClock, type TestClock } from './clock.ts';

export interface TestApi extends LocalApi {
  /** A ready key for each plan (free, pro, business). */
  readonly keys: Record<Exclude<PlanName, 'enterprise'>, string>;
  /**
   * fetch relative to the base URL (`/pets`), with the Free key unless `key` is given ('' = none). Every response is
   * validated against openapi.json (test/helpers/contract.ts) unless `contract: false`: a response the document
   * does not allow fails the test.
   */
  call(path: string, init?: RequestInit & { key?: string; contract?: boolean }): Promise<Response>;
  /** A fetch for clients under test (e.g. the typed client): same contract validation, absolute URLs. */
  readonly fetch: typeof fetch;
  /** The clock of the functions and the gateway: the wall clock until a test sets another. */
  readonly clock: TestClock;
  /** A DynamoDB client of the test's own on this API's tables (fixtures, reads behind the API's back). */
  readonly storage: Storage;
}

/** The CURSOR_SECRET of a test API's functions. */
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789';

export function uniquePrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

export async function startTestApi(opts: LocalApiOptions = {}): Promise<TestApi> {
  const keys = {
    // Keys of the issued form: the authorizer refuses any other shape without a read.
    free: generateKey(),
    pro: generateKey(),
    business: generateKey(),
  };
  const clock = testClock();
  const api = await startLocalApi({
    now: clock.now,
    dynamoEndpoint: inject('dynamoEndpoint'),
    tablePrefix: uniquePrefix(),
    devKeys: [
      { key: keys.free, plan: 'free' },
      { key: keys.pro, plan: 'pro' },
      { key: keys.business, plan: 'business' },
    ],
    // Uncached unless a test asks for the template's cache: tests revoke keys and expect the next request to see it.
    authCacheTtlSeconds: 0,
    // Lambda's throttle past the authorizer's reserved concurrency only where a test floods it on purpose
    // (authorizer-flood.test.ts): others send concurrent uncached requests about other things.
    reservedConcurrency: false,
    ...opts,
    env: { CURSOR_SECRET: TEST_CURSOR_SECRET, DYNAMODB_TIMEOUT_MS: '8000', ...opts.env },
  });
  const storage = localStorage(api.dynamoEndpoint, api.tableEnv);
  return {
    ...api,
    keys,
    clock,
    storage,
    async close() {
      storage.ddb.destroy();
      await api.close();
    },
    async call(path, init = {}) {
      const { key = keys.free, contract = true, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('Authorization', `Bearer ${key}`);
      if (typeof rest.body === 'string' && !headers.has('content-type'))
        headers.set('Content-Type', 'application/json');
      const res = await fetch(`${api.url}${path}`, { ...rest, headers });
      if (contract) await checkResponse(rest.method ?? 'GET', path, res);
      return res;
    },
    fetch: contractFetch(api.url),
  };
}

/** A fetch that validates every response below `baseUrl` against openapi.json. */
export function contractFetch(baseUrl: string): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const res = await fetch(req);
    if (req.url.startsWith(`${baseUrl}/`)) await checkResponse(req.method, req.url.slice(baseUrl.length), res);
    return res;
  };
}

/** Telemetry that writes nothing, for storage adapters a test builds itself. */
export function quietTelemetry(): Telemetry {
  return createTelemetry({ service: 'test', namespace: 'Test', stage: 'test', logLevel: 'SILENT', metrics: false });
}
