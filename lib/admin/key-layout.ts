/**
 * The admin tool's side of the key layout (contract/key-layout.ts): what the stage's authorizer understands, and the
 * refusal of a write it would not follow. The order is deploy first, reconcile after: a write waits for the release
 * that names what it leaves, so no customer's usage key is ever one the running authorizer cannot find, nor one a
 * rollback to it cannot find.
 */
import { KEY_LAYOUT, KEY_LAYOUTS, layoutForPooled, type KeyLayout } from '../../contract/key-layout.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';

/** The layout the target's authorizer understands. */
export const deployedLayout = (ctx: AdminContext): KeyLayout => ctx.deps.keyLayout ?? KEY_LAYOUT;

/** Why the deployed authorizer would not find `what` (a write that needs layout `needed`); undefined: it would. */
export function layoutShortfall(ctx: AdminContext, needed: KeyLayout, what: string): string | undefined {
  const have = deployedLayout(ctx);
  if (have >= needed) return undefined;
  const { stage } = ctx.deps;
  return (
    `${what} waits for a deploy: the ${stage} stack's authorizer (key layout ${have}, release ` +
    `${KEY_LAYOUTS[have].release}) names ${KEY_LAYOUTS[have].understands}, and would name a usage key on no usage ` +
    `plan (API Gateway answers 403); deploy ${KEY_LAYOUTS[needed].release} (key layout ${needed}) to ${stage} ` +
    'first, then run this again (docs/deployment.md, "The key layout")'
  );
}

/** Refuses, before anything is written, a write the deployed authorizer would not follow. */
export function requireLayout(ctx: AdminContext, needed: KeyLayout, what: string): void {
  const why = layoutShortfall(ctx, needed, what);
  if (why) throw new AdminError(why);
}

/**
 * The layout a record needs to leave its own API key (or usage plan) for its pool, and to have that key deleted: the
 * deployed authorizer (and the one a rollback brings back, which the stack's output then says) must name its pool
 * member, not the own key it would otherwise still name.
 */
export const layoutToLeaveOwnKey = (r: Pick<KeyRecord, 'plan'>): KeyLayout => layoutForPooled(r.plan);
