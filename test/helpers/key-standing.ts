/**
 * The setup the tests of a key's standing share (a spent or banned key, and the admin commands that lift it): the local
 * gateway with the template's authorizer cache (60 s), as deployed, so a cached decision outlives a change until its
 * TTL, as on API Gateway; dev keys named as the local server names them; a key's day counters written as the limiter
 * writes them.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { generateKey, hashKey } from '../../lambdas/domain/keys.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import type { LocalFunction } from '../../lib/local/lambda.ts';
import { startLocalAdmin } from './admin.ts';
import type { TestApi } from './api.ts';

/** A dev key's id, as the local server names it (lib/local/keys.ts). */
export const devKeyId = (key: string): string => `dev_${hashKey(key).slice(0, 12)}`;

/**
 * For a test file: one fresh dev key of `plan`, served by a test API with the template's authorizer cache, and the
 * admin tool `--local` on the API's clock (`api` and `deps` are there once beforeAll has run).
 */
export function cachedAdminFixture(plan: 'free' | 'pro' | 'business'): {
  readonly key: string;
  readonly keyId: string;
  api: TestApi;
  deps: AdminDeps;
} {
  const key = generateKey();
  const fixture = { key, keyId: devKeyId(key) } as ReturnType<typeof cachedAdminFixture>;
  beforeAll(async () => {
    const { api, deps } = await startLocalAdmin({ devKeys: [{ key, plan }], authCacheTtlSeconds: undefined });
    Object.assign(fixture, { api, deps: { ...deps, now: api.clock.now } });
  });
  afterAll(() => fixture.api?.close());
  return fixture;
}

/**
 * Puts the clock at `nowMs` and writes `keyId`'s day counters there as the limiter records them: `counters.d`
 * requests today, the last minute opened a minute ago, and a ban until `counters.banUntil` (seconds) if given.
 */
export async function setDayCounters(
  api: TestApi,
  keyId: string,
  nowMs: number,
  counters: { d: number; banUntil?: number },
): Promise<void> {
  api.clock.set(() => nowMs);
  const dayStart = nowMs / 1000 - ((nowMs / 1000) % 86_400);
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.state,
      Item: { ...shardKey(keyId, dayStart, 0), ms: nowMs / 1000 - 60, m: 0, ...counters },
    }),
  );
}

/** A response's status and, when it is an error, its code: `429 quota_exceeded`, `200`. */
export async function codeOf(res: Response): Promise<string> {
  return `${res.status} ${res.ok ? '' : ((await res.json()) as { code: string }).code}`.trim();
}

/**
 * Counts the invocations of `operationId`'s function from now on: a request that reached it was not refused by the
 * gateway.
 */
export function countInvocations(api: Pick<TestApi, 'functions'>, operationId: string): { readonly count: number } {
  const functions = api.functions as Map<string, LocalFunction>;
  const [id, fn] = [...functions].find(([, f]) => f.def.name === operationId)!;
  const counter = { count: 0 };
  functions.set(id, {
    ...fn,
    handler: (event, context) => {
      counter.count++;
      return fn.handler(event, context);
    },
  });
  return counter;
}
