/**
 * What every key administration command shares: its dependencies and clock, finding a record, re-applying a change
 * to the latest version of a record, and the saga step that picks a key's usage plan.
 */
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import { StaleKeyRecordError, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { bracketPlanName, enterpriseBracket } from './brackets.ts';
import { AdminError, type AdminDeps } from './ports.ts';

/** Attempts of a command whose record keeps changing under it (another admin at work) before it gives up. */
const MAX_ATTEMPTS = 5;

export interface AdminContext {
  readonly deps: AdminDeps;
  readonly now: () => number;
  find(keyId: string): Promise<KeyRecord>;
  /** Reads the key and applies a change to that version; when another write came first, reads again and retries. */
  onLatest<T>(keyId: string, apply: (record: KeyRecord) => Promise<T>): Promise<T>;
}

export function adminContext(deps: AdminDeps): AdminContext {
  const find = async (keyId: string): Promise<KeyRecord> => {
    const record = await deps.store.getById(keyId);
    if (!record) throw new AdminError(`no key with id ${keyId}`);
    return record;
  };
  return { deps, now: deps.now ?? Date.now, find, onLatest: (keyId, apply) => onLatest(find, keyId, apply) };
}

async function onLatest<T>(
  find: (keyId: string) => Promise<KeyRecord>,
  keyId: string,
  apply: (record: KeyRecord) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await apply(await find(keyId));
    } catch (err) {
      if (!(err instanceof StaleKeyRecordError)) throw err;
      if (attempt >= MAX_ATTEMPTS)
        throw new AdminError(
          `key ${keyId} kept changing while this command ran (another admin at work?); nothing was changed, run it again`,
        );
    }
  }
}

/**
 * The usage plan a key is attached to; `created` when it is the key's own (Enterprise keys made before brackets had
 * one; none is made now), deleted with the key.
 */
export interface ChosenPlan {
  id: string;
  created: boolean;
}

/**
 * A saga step that picks the usage plan for a plan into `chosen`: the stack's for a standard plan, the stage's plan of
 * the key's bracket for Enterprise (brackets.ts; created on first use, found by name after). A bracket's plan is
 * shared and bounded in number, so it stays: there is nothing to undo.
 */
export function usagePlanStep(ctx: AdminContext, plan: PlanName, limits: PlanLimits | undefined) {
  const chosen: ChosenPlan = { id: '', created: false };
  const step = {
    run: async () => {
      chosen.id = await planIdFor(ctx, plan, limits);
    },
  };
  return { chosen, step };
}

/** The usage plan a key of that plan and limits belongs on (an Enterprise bracket's plan is created if missing). */
export async function planIdFor(ctx: AdminContext, plan: PlanName, limits: PlanLimits | undefined): Promise<string> {
  if (plan !== 'enterprise') return ctx.deps.usagePlans[plan] ?? '';
  const bracket = enterpriseBracket(limits!);
  const name = bracketPlanName(ctx.deps.stage, bracket);
  return (await ctx.deps.gateway.findPlan(name)) ?? (await ctx.deps.gateway.createPlan(name, bracket));
}

/** The record fields naming a key's own usage plan, when it has one. */
export const ownPlanOf = (chosen: ChosenPlan): { usagePlanId?: string } =>
  chosen.created && chosen.id ? { usagePlanId: chosen.id } : {};
