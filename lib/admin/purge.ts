/**
 * `keys purge`: finishes, for every key that still has one, what API Gateway holds of its own from before pools (an
 * API key, a usage plan): reconcile moves it into its pool and deletes them once the grace period (at least the
 * authorizer cache TTL: no cached authorizer result still names them) has passed. The records stay.
 *
 * Each key is done on its own: one that fails is reported and the others go on, and every step is idempotent, so
 * running purge again finishes what a failure left.
 */
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { describeError, reconcile } from './reconcile.ts';
import { view, type KeyView } from './rules.ts';

export interface PurgeResult {
  readonly purged: KeyView[];
  /** Keys whose clean-up failed this time: still recorded, so the next purge tries them again. */
  readonly failed: Array<{ readonly keyId: string; readonly error: string }>;
  /** Keys a purge stopped part-way left pending (no longer waiting for purge), finished by this one. */
  readonly finished: KeyView[];
  /** Why the keys left pending could not be read (purge done otherwise): `keys reconcile --all` finishes them. */
  readonly unread?: string;
}

/** Whether a record has something for purge to delete at `cutoff` (ms). */
export function purgeDue(r: KeyRecord, cutoff: number): boolean {
  if (r.retiredApiKeyId || r.retiredUsagePlanId) return Date.parse(r.retiredAt ?? '1970-01-01T00:00:00Z') <= cutoff;
  return (
    r.status === 'revoked' && !!(r.apiGatewayKeyId || r.usagePlanId) && Date.parse(r.revokedAt ?? r.createdAt) <= cutoff
  );
}

export async function purge(ctx: AdminContext): Promise<PurgeResult> {
  const cutoff = ctx.now() - (ctx.deps.revokedKeyGraceMs ?? 120_000);
  const due = await ctx.deps.store.listDue(cutoff).catch((err: unknown) => {
    throw new AdminError(`nothing was purged (${describeError(err)}): run \`keys purge\` again`);
  });
  const purged: KeyView[] = [];
  const failed: PurgeResult['failed'][number][] = [];
  const finished: KeyView[] = [];
  /** Reconciles one key; a key whose gateway side is gone joins `into`, one that still holds something `failed`. */
  const finish = async (keyId: string, into: KeyView[]) => {
    try {
      const { record, waiting } = await reconcile(ctx, keyId);
      // Held until the deployed authorizer names its pool (key-layout.ts): nothing of its own was deleted, so it
      // still waits and is not finished.
      if (record.apiGatewayKeyId || record.usagePlanId || record.retiredApiKeyId || record.retiredUsagePlanId)
        failed.push({ keyId, error: waiting.join('; ') });
      else into.push(view(record));
    } catch (err) {
      failed.push({ keyId, error: describeError(err) });
    }
  };
  for (const stale of due.filter((r) => purgeDue(r, cutoff))) await finish(stale.keyId, purged);
  // A purge stopped part-way (a crash, Ctrl-C) can leave a key past its last gateway step, no longer waiting for purge
  // but not yet reconciled: the listing's pending partitions hold it, so running purge again finishes it. Only keys
  // purge works on (revoked, or retiring something); an active key's pending change is `keys reconcile`'s.
  const done = new Set([...purged, ...failed].map((k) => k.keyId));
  let after: string | undefined;
  try {
    do {
      const page = await ctx.deps.store.listPage({ pending: true }, 100, after);
      for (const r of page.records) {
        if (done.has(r.keyId) || (r.status === 'active' && !r.retiredApiKeyId && !r.retiredUsagePlanId)) continue;
        await finish(r.keyId, finished);
      }
      after = page.next;
    } while (after);
  } catch (err) {
    return { purged, failed, finished, unread: describeError(err) };
  }
  return { purged, failed, finished };
}
