/**
 * Key administration: create, list, show, history, revoke, restore, rotate, set-plan, ban, unban, usage,
 * issue-check-key, and the removal of what release 3357b0c's tool made at API Gateway. Every change of a key is one
 * DynamoDB transaction with its history entry (audit.ts): who made it, in the same write as the change. No key command
 * calls API Gateway: every key of a plan counts against its plan's one API key, which the stack makes.
 *
 * Record writes are conditional on the version read: a command that finds the record changed re-reads it and
 * applies itself again, so a concurrent revoke or set-plan is never undone.
 *
 * The commands live in lifecycle.ts (writes), unban.ts, check-key.ts, release-api-keys.ts and queries.ts (reads);
 * this module binds them to one set of dependencies.
 */
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
import { auditAdmin } from './audit-search.ts';
import { issueCheckKey } from './check-key.ts';
import { revokeOwner, type OwnerKeyOutcome } from './owner-revoke.ts';
import { adminContext } from './context.ts';
import {
  ban,
  create,
  restore,
  revoke,
  rotate,
  setExpiry,
  setPlan,
  setScope,
  type CreateInput,
  type Created,
  type PlanInput,
} from './lifecycle.ts';
import type { KeyScope } from '../../lambdas/domain/keys.ts';
import { removeReleaseApiKeys } from './release-api-keys.ts';
import { unban } from './unban.ts';
import type { AdminDeps } from './ports.ts';
import { list, show, usage, type ListPageOptions } from './queries.ts';

export { AdminError, type AdminDeps, type KeyAdminStorePort } from './ports.ts';
export type { KeyView } from './rules.ts';

/** `actor`: the name `--actor` gave, recorded beside the principal in each change's history entry (audit.ts). */
export function keyAdmin(deps: AdminDeps, options: { actor?: string } = {}) {
  const ctx = adminContext(deps, options);
  return {
    /** `show`: called with the secret before the write that makes it work (lifecycle.ts create). */
    create: (input: CreateInput, show?: (created: Created) => void) => create(ctx, input, show),
    list: (filter?: ListFilter, page?: ListPageOptions) => list(ctx, filter, page),
    /** Gives records an earlier release listed otherwise the listing's attributes (lambdas/storage/key-listing.ts). */
    reindex: async () => ({ keys: await ctx.deps.store.reindex(), history: await ctx.deps.store.reindexHistory() }),
    show: (keyId: string) => show(ctx, keyId),
    revoke: (keyId: string) => revoke(ctx, keyId),
    restore: (keyId: string) => restore(ctx, keyId),
    rotate: (keyId: string, overlapMinutes?: number, options?: { endOverlaps?: boolean }) =>
      rotate(ctx, keyId, overlapMinutes, options),
    setExpiry: (keyId: string, when: string) => setExpiry(ctx, keyId, when),
    setScope: (keyId: string, scope: KeyScope) => setScope(ctx, keyId, scope),
    /** A key's history of changes, oldest first: who, what (before and after), when and what it did. */
    ...auditAdmin(ctx),
    revokeOwner: (owner: string, report?: (k: OwnerKeyOutcome) => void) => revokeOwner(ctx, owner, report),
    setPlan: (keyId: string, input: PlanInput) => setPlan(ctx, keyId, input),
    usage: (keyId: string) => usage(ctx, keyId),
    unban: (keyId: string) => unban(ctx, keyId),
    ban: (keyId: string, minutes: number) => ban(ctx, keyId, minutes),
    /** The stage's pre-traffic check key, made and stored in its Secrets Manager secret (check-key.ts). */
    issueCheckKey: (stage: string) => issueCheckKey(ctx, stage),
    /** What release 3357b0c's tool made at API Gateway, deleted (release-api-keys.ts); `progress`: a line per step. */
    removeReleaseApiKeys: (progress: (line: string) => void = () => {}) => removeReleaseApiKeys(ctx, progress),
  };
}
export type KeyAdmin = ReturnType<typeof keyAdmin>;
