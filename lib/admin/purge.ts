/**
 * `keys purge`: deletes what API Gateway still holds for keys that no longer need it: the API key (and Enterprise
 * usage plan) of every key revoked longer ago than the grace period (at least the authorizer cache TTL: no cached
 * authorizer result still names them), and any usage plan a move off Enterprise left undeleted. The records stay.
 *
 * Each key is done on its own: one that fails is reported and the others go on, and every step is idempotent (an
 * API key or plan already deleted counts as deleted), so running purge again finishes what a failure left.
 */
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { view, type KeyView } from './rules.ts';

export interface PurgeResult {
  readonly purged: KeyView[];
  /** Keys whose clean-up failed this time: still recorded, so the next purge tries them again. */
  readonly failed: Array<{ readonly keyId: string; readonly error: string }>;
}

/** Whether a record has something for purge to delete at `cutoff` (ms). */
export function purgeDue(r: KeyRecord, cutoff: number): boolean {
  if (r.retiredUsagePlanId) return true;
  return (
    r.status === 'revoked' && !!(r.apiGatewayKeyId || r.usagePlanId) && Date.parse(r.revokedAt ?? r.createdAt) <= cutoff
  );
}

export async function purge(ctx: AdminContext): Promise<PurgeResult> {
  const { store, gateway } = ctx.deps;
  const cutoff = ctx.now() - (ctx.deps.revokedKeyGraceMs ?? 120_000);
  const due = await store.listDue(cutoff);
  const result: PurgeResult = { purged: [], failed: [] };
  for (const stale of due.filter((r) => purgeDue(r, cutoff))) {
    try {
      result.purged.push(
        await ctx.onLatest(stale.keyId, async (record) => {
          if (!purgeDue(record, cutoff)) return view(record);
          const revoked = record.status === 'revoked';
          if (revoked && record.apiGatewayKeyId) await gateway.deleteKey(record.apiGatewayKeyId);
          if (revoked && record.usagePlanId) await gateway.deletePlan(record.usagePlanId);
          if (record.retiredUsagePlanId) await gateway.deletePlan(record.retiredUsagePlanId);
          const removed = [
            ...(revoked ? ['apiGatewayKeyId', 'usagePlanId'] : []),
            ...(record.retiredUsagePlanId ? ['retiredUsagePlanId'] : []),
          ];
          return view(await store.update(record, {}, removed));
        }),
      );
    } catch (err) {
      result.failed.push({
        keyId: stale.keyId,
        error: err instanceof AdminError ? err.message : `${(err as Error)?.name}: ${(err as Error)?.message}`,
      });
    }
  }
  return result;
}
