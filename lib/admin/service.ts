/**
 * Key administration: create, list, show, history, revoke, restore, rotate, set-plan, ban, unban, purge, usage,
 * reconcile, issue-check-key. Every change is recorded with who made it (audit.ts), in the same write as the change.
 * A key's record is the desired state and the only thing a command writes; reconcile (reconcile.ts) then brings API Gateway
 * and the limiter to it, each step safe to repeat, so any failure is finished by `keys reconcile <id>`.
 *
 * No key has an API Gateway API key of its own: every key shares a pool of API keys of its plan or Enterprise bracket
 * (contract/key-pool.ts), so the account's 10,000 API keys and 300 usage plans do not bound the number of customers;
 * keys made before pools are moved into theirs by reconcile, and their own API key deleted after the authorizer
 * cache TTL (a cached authorizer result names it until then).
 *
 * Record writes are conditional on the version read: a command that finds the record changed re-reads it and
 * applies itself again, so a concurrent revoke or set-plan is never undone.
 *
 * The commands live in lifecycle.ts (writes), unban.ts, purge.ts, reconcile*.ts and queries.ts (reads); this module
 * binds them to one set of dependencies.
 */
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
import { issueCheckKey } from './check-key.ts';
import { adminContext } from './context.ts';
import { ban, create, restore, revoke, rotate, setPlan, type Created, type PlanInput } from './lifecycle.ts';
import { describeError, reconcile, ReconcileError } from './reconcile.ts';
import { AdminError } from './ports.ts';
import { reconcileAll } from './reconcile-all.ts';
import { purge } from './purge.ts';
import { unban } from './unban.ts';
import type { AdminDeps } from './ports.ts';
import { list, show, usage } from './queries.ts';
import { view } from './rules.ts';

export { AdminError, type AdminDeps, type KeyAdminStorePort } from './ports.ts';
export type { KeyView } from './rules.ts';

/** `actor`: the name `--actor` gave, recorded beside the principal in each change's history entry (audit.ts). */
export function keyAdmin(deps: AdminDeps, options: { actor?: string } = {}) {
  const ctx = adminContext(deps, options);
  return {
    /** `show`: called with the secret before the write that makes it work (lifecycle.ts create). */
    create: (input: PlanInput & { owner: string }, show?: (created: Created) => void) => create(ctx, input, show),
    list: (filter?: ListFilter, page?: { limit?: number; after?: string }) => list(ctx, filter, page),
    /** Once after deploying the listing index: gives older records its attributes. */
    reindex: () => ctx.deps.store.reindex(),
    show: (keyId: string) => show(ctx, keyId),
    revoke: (keyId: string) => revoke(ctx, keyId),
    restore: (keyId: string) => restore(ctx, keyId),
    rotate: (keyId: string, overlapMinutes?: number) => rotate(ctx, keyId, overlapMinutes),
    /** A key's history of changes, oldest first: who, what (before and after), when and what it did. */
    history: async (keyId: string) => ({ keyId, entries: await ctx.deps.store.history(keyId) }),
    purge: () => purge(ctx),
    setPlan: (keyId: string, input: PlanInput) => setPlan(ctx, keyId, input),
    usage: (keyId: string) => usage(ctx, keyId),
    unban: (keyId: string) => unban(ctx, keyId),
    ban: (keyId: string, minutes: number) => ban(ctx, keyId, minutes),
    reconcile: async (keyId: string) => {
      const r = await reconcile(ctx, keyId).catch((err: unknown) => {
        if (err instanceof AdminError && !(err instanceof ReconcileError)) throw err;
        throw new AdminError(`reconciling ${keyId}: ${describeError(err)}; run \`keys reconcile ${keyId}\` again`);
      });
      return { ...r, record: view(r.record) };
    },
    /** The stage's pre-traffic check key, made and stored in its Secrets Manager secret (check-key.ts). */
    issueCheckKey: (stage: string) => issueCheckKey(ctx, stage),
    reconcileAll: (opts?: Parameters<typeof reconcileAll>[1]) => reconcileAll(ctx, opts),
  };
}
export type KeyAdmin = ReturnType<typeof keyAdmin>;
