/**
 * The setup the tests of a key's standing share (a spent or banned key, and the admin commands that lift it): the local
 * gateway with the template's authorizer cache (60 s), as deployed, so a cached decision outlives a change until its
 * TTL, as on API Gateway; dev keys named as the local server names them; a key's day counters written as the limiter
 * writes them.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { poolMemberOf } from '../../contract/key-pool.ts';
import type { PlanName } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import type { LocalApiOptions } from '../../lib/local/app.ts';
import { startLocalAdmin } from './admin.ts';
import { startTestApi, type TestApi } from './api.ts';

/** A dev key's id, as the local server names it (lib/local/keys.ts). */
export const devKeyId = (key: string): string => `dev_${hashKey(key).slice(0, 12)}`;

/** Two Free dev keys whose key ids map to the same pool member. */
export function twoFreeKeysOnOneMember(): { a: string; b: string; member: number } {
  const seen = new Map<number, string>();
  for (;;) {
    const key = `free_${randomBytes(16).toString('hex')}`;
    const member = poolMemberOf(devKeyId(key));
    const other = seen.get(member);
    if (other) return { a: key, b: other, member };
    seen.set(member, key);
  }
}

/** A test API serving `devKeys`, with the template's authorizer cache. */
export function startCachedApi(devKeys: LocalApiOptions['devKeys']): Promise<TestApi> {
  return startTestApi({ devKeys, authCacheTtlSeconds: undefined });
}

/** A test API serving one dev key, with the template's authorizer cache, and the admin tool `--local` on its clock. */
export async function startCachedAdmin(key: string, plan: PlanName): Promise<{ api: TestApi; deps: AdminDeps }> {
  const { api, deps } = await startLocalAdmin({ devKeys: [{ key, plan }], authCacheTtlSeconds: undefined });
  return { api, deps: { ...deps, now: api.clock.now } };
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
