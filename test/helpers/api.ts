/**
 * Starts the local API (the same gateway `npm start` runs) on the shared DynamoDB Local, with tables of its own.
 * Handlers read their environment at import, so this must be called before anything imports lambdas/handlers.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { PlanName } from '../../lib/config/plans.ts';
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../lib/local/app.ts';

export interface TestApi extends LocalApi {
  /** A ready key for each plan (free, pro, business). */
  readonly keys: Record<Exclude<PlanName, 'enterprise'>, string>;
  /** fetch relative to the base URL (`/pets`), with the Free key unless `key` is given ('' = none). */
  call(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
}

export function uniquePrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

export async function startTestApi(opts: LocalApiOptions = {}): Promise<TestApi> {
  const keys = {
    free: `free_${randomBytes(16).toString('hex')}`,
    pro: `pro_${randomBytes(16).toString('hex')}`,
    business: `business_${randomBytes(16).toString('hex')}`,
  };
  const api = await startLocalApi({
    dynamoEndpoint: inject('dynamoEndpoint'),
    tablePrefix: uniquePrefix(),
    devKeys: [
      { key: keys.free, plan: 'free' },
      { key: keys.pro, plan: 'pro' },
      { key: keys.business, plan: 'business' },
    ],
    env: { CURSOR_SECRET: 'test-cursor-secret-0123456789', ...opts.env },
    ...opts,
  });
  return {
    ...api,
    keys,
    call(path, init = {}) {
      const { key = keys.free, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('Authorization', `Bearer ${key}`);
      if (typeof rest.body === 'string' && !headers.has('content-type')) headers.set('Content-Type', 'application/json');
      return fetch(`${api.url}${path}`, { ...rest, headers });
    },
  };
}
