/**
 * Key administration: create, list, show, revoke, rotate, set-plan, purge, usage, unban. Every command that touches both
 * DynamoDB and API Gateway orders its steps so a failure never leaves a key half-written: API Gateway first with
 * rollback on failure, DynamoDB (what the authorizer reads) last.
 *
 * A paying key has one API Gateway API key for its whole life, valued from its key id (usageIdentifierKey), never
 * from its secret. A Free key has none: it shares the stack's pool of API keys (contract/key-pool.ts), so creating,
 * revoking and purging it call no API Gateway API, and the account's 10,000 API keys bound paying customers only; it
 * gets an API key of its own when it moves to a paying plan, and keeps it. Rotation changes only the DynamoDB record; revocation leaves the API Gateway key in its usage plan
 * until `purge`, after the authorizer cache TTL: a cached authorizer result names that API key, and API Gateway
 * answers 403 to a request whose usageIdentifierKey names a deleted key or one in no usage plan of the stage.
 *
 * Record writes are conditional on the version read: a command that finds the record changed re-reads it and
 * applies itself again, so a concurrent revoke or set-plan is never undone.
 *
 * The commands live in lifecycle.ts (writes) and queries.ts (reads); this module binds them to one set of
 * dependencies.
 */
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
import { adminContext } from './context.ts';
import { create, revoke, rotate, setPlan, type PlanInput } from './lifecycle.ts';
import { purge } from './purge.ts';
import { unban } from './unban.ts';
import type { AdminDeps } from './ports.ts';
import { list, show, usage } from './queries.ts';

export { AdminError, type AdminDeps, type KeyAdminStorePort } from './ports.ts';
export type { KeyView } from './rules.ts';

export function keyAdmin(deps: AdminDeps) {
  const ctx = adminContext(deps);
  return {
    create: (input: PlanInput & { owner: string }) => create(ctx, input),
    list: (filter?: ListFilter, page?: { limit?: number; after?: string }) => list(ctx, filter, page),
    /** Once after deploying the listing index: gives older records its attributes. */
    reindex: () => ctx.deps.store.reindex(),
    show: (keyId: string) => show(ctx, keyId),
    revoke: (keyId: string) => revoke(ctx, keyId),
    rotate: (keyId: string) => rotate(ctx, keyId),
    purge: () => purge(ctx),
    setPlan: (keyId: string, input: PlanInput) => setPlan(ctx, keyId, input),
    usage: (keyId: string) => usage(ctx, keyId),
    unban: (keyId: string) => unban(ctx, keyId),
  };
}
export type KeyAdmin = ReturnType<typeof keyAdmin>;
