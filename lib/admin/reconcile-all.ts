/**
 * `keys reconcile --all`: the sweep after an incident. Pages through every key (the listing index, `keys list`'s
 * order) and reconciles each one whose record says something is pending (reconcile.ts `converged`), or every one
 * with `force` (after an incident outside the tool: a usage plan edited by hand, a restored table). A key that fails
 * is reported and the sweep goes on; `next` says where to resume (`--after`), so an interrupted sweep need not start
 * again, and running it again from the start only does what is still pending. Every bracket in use is checked
 * complete too (one read each), so a release that adds a pool member is finished by one sweep before it deploys.
 */
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { converged, describeError, reconcile } from './reconcile.ts';
import { ensureBracketPool } from './reconcile-pool.ts';

export interface Sweep {
  /** Keys looked at, and those a reconcile changed something for. */
  readonly seen: number;
  readonly reconciled: Array<{ readonly keyId: string; readonly did: readonly string[] }>;
  readonly waiting: Array<{ readonly keyId: string; readonly waiting: readonly string[] }>;
  readonly failed: Array<{ readonly keyId: string; readonly error: string }>;
  /** Where a sweep stopped early (`limit` pages) resumes; absent: it went through. */
  readonly next?: string;
}

/** Keys per page of the sweep. */
const PAGE = 100;

export async function reconcileAll(
  ctx: AdminContext,
  opts: { after?: string; force?: boolean; pages?: number } = {},
): Promise<Sweep> {
  const reconciled: Sweep['reconciled'][number][] = [];
  const waiting: Sweep['waiting'][number][] = [];
  const failed: Sweep['failed'][number][] = [];
  const done = new Set<string>();
  const visit = async (r: KeyRecord) => {
    if (done.has(r.keyId)) return;
    done.add(r.keyId);
    if (!opts.force && converged(r) && !r.retiredApiKeyId && !r.retiredUsagePlanId) {
      // A converged key's bracket pool may still lack a member a newer release names (its probation member): the
      // authorizer would name a key on no usage plan, which API Gateway answers 403. One read per bracket per sweep.
      const limits = r.status === 'active' && r.plan === 'enterprise' ? limitsOf(r) : undefined;
      if (!limits) return;
      try {
        const made = await ensureBracketPool(ctx, limits);
        if (made.length) reconciled.push({ keyId: r.keyId, did: made.map((m) => `made ${m}`) });
      } catch (err) {
        failed.push({ keyId: r.keyId, error: `its Enterprise bracket pool at the gateway (${describeError(err)})` });
      }
      return;
    }
    try {
      const out = await reconcile(ctx, r.keyId);
      if (out.did.length) reconciled.push({ keyId: r.keyId, did: out.did });
      if (out.waiting.length) waiting.push({ keyId: r.keyId, waiting: out.waiting });
    } catch (err) {
      failed.push({ keyId: r.keyId, error: describeError(err) });
    }
  };
  // Keys with something of their own left at the gateway first: a listing need not hold them (they wait for purge).
  if (!opts.after) for (const r of await ctx.deps.store.listDue(ctx.now())) await visit(r);
  let after = opts.after;
  let seen = 0;
  for (let page = 0; page < (opts.pages ?? Infinity); page++) {
    const { records, next } = await ctx.deps.store.listPage({}, PAGE, after);
    seen += records.length;
    for (const r of records) await visit(r);
    after = next;
    if (!after) break;
  }
  return { seen, reconciled, waiting, failed, ...(after ? { next: after } : {}) };
}
