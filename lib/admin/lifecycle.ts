/**
 * The commands that change keys: create, revoke, rotate, set-plan, purge. Each orders its steps as the module
 * comment of service.ts describes (API Gateway first with rollback, DynamoDB last; writes conditional on the version
 * read, re-applied by onLatest when another write came first).
 */
import { randomUUID } from 'node:crypto';
import { PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { isPooledPlan } from '../../contract/key-pool.ts';
import {
  generateKey,
  generateKeyId,
  hashKey,
  limitsOf,
  usageIdentifierKey,
  type KeyRecord,
} from '../../lambdas/domain/keys.ts';
import { bracketPlanName, enterpriseBracket } from './brackets.ts';
import { ownPlanOf, usagePlanStep, type AdminContext, type ChosenPlan } from './context.ts';
import { AdminError } from './ports.ts';
import { checkLimits, checkOwner, saga, sameLimits, view, type KeyView, type SagaStep } from './rules.ts';

export interface PlanInput {
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
}

export async function create(
  ctx: AdminContext,
  input: PlanInput & { owner: string },
): Promise<{ key: string; record: KeyView }> {
  const owner = checkOwner(input.owner);
  if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
  const limits = checkLimits(input.plan, input.perMinute, input.perDay);
  const { store } = ctx.deps;
  const key = generateKey();
  const keyId = generateKeyId();
  const createdAt = new Date(ctx.now()).toISOString();
  const writeId = randomUUID();
  const plan = usagePlanStep(ctx, input.plan, limits);
  let apiKeyId = '';
  const ownKey = ownApiKeySteps(ctx, keyId, plan.chosen, (id) => (apiKeyId = id));
  const record = (): KeyRecord => ({
    hash: hashKey(key),
    keyId,
    owner,
    plan: input.plan,
    ...(limits ? { limits } : {}),
    status: 'active',
    createdAt,
    ...(apiKeyId ? { apiGatewayKeyId: apiKeyId } : {}),
    ...ownPlanOf(plan.chosen),
    version: 1,
    writeId,
  });
  // A Free key touches no API Gateway API at all: it shares the stack's pool of API keys (contract/key-pool.ts), so
  // neither the account's 10,000 API keys nor CreateApiKey's 5 calls per second limit how many there are.
  await saga([...(isPooledPlan(input.plan) ? [] : [plan.step, ...ownKey]), { run: () => store.put(record()) }]);
  return { key, record: view(record()) };
}

/**
 * The saga steps that give a key an API Gateway API key of its own and put it on the chosen usage plan. Its value is
 * derived from the key id (never the secret): it stays the same across rotations.
 */
function ownApiKeySteps(ctx: AdminContext, keyId: string, chosen: ChosenPlan, created: (apiKeyId: string) => void) {
  const { gateway } = ctx.deps;
  let apiKeyId = '';
  return [
    {
      run: async () => {
        apiKeyId = await gateway.createKey(`animal-store-${keyId}`, usageIdentifierKey(keyId));
        created(apiKeyId);
      },
      // No id: the create failed and found nothing of its own (gateway.ts), so there is nothing to delete.
      undo: () => (apiKeyId ? gateway.deleteKey(apiKeyId) : Promise.resolve()),
      made: () => `API key ${apiKeyId}`,
    },
    {
      run: () => gateway.attach(apiKeyId, chosen.id),
      undo: () => gateway.detach(apiKeyId, chosen.id),
      made: () => `API key ${apiKeyId} on usage plan ${chosen.id}`,
    },
  ];
}

/**
 * Marks the key revoked: the authorizer refuses it from now on (after its cache TTL). Its API Gateway key stays
 * (see `purge`): a cached result of the authorizer still names it until the TTL ends. Revoking twice is a no-op.
 */
export async function revoke(ctx: AdminContext, keyId: string): Promise<KeyView & { already: boolean }> {
  const revokedAt = new Date(ctx.now()).toISOString();
  return ctx.onLatest(keyId, async (record) =>
    record.status === 'revoked'
      ? { ...view(record), already: true }
      : { ...view(await ctx.deps.store.update(record, { status: 'revoked', revokedAt })), already: false },
  );
}

/**
 * A new secret on the same key id, plan and API Gateway key. The old secret stops working at once (in the cloud,
 * once cached authorizer results expire; until then those results still name the same, existing API key).
 */
export async function rotate(ctx: AdminContext, keyId: string): Promise<{ key: string; record: KeyView }> {
  const rotatedAt = new Date(ctx.now()).toISOString();
  return ctx.onLatest(keyId, async (record) => {
    if (record.status !== 'active')
      throw new AdminError(`key ${keyId} is ${record.status}: only active keys can be rotated`);
    const key = generateKey();
    const next: KeyRecord = {
      ...record,
      hash: hashKey(key),
      rotatedAt,
      version: (record.version ?? 0) + 1,
      writeId: randomUUID(),
    };
    await ctx.deps.store.replaceHash(record, next);
    return { key, record: view(next) };
  });
}

/** The key after set-plan, and `changed: false` when it already had that plan and those limits (nothing written). */
export type PlanChange = KeyView & { readonly changed: boolean };

/**
 * Moves a key to another plan (or sets an Enterprise key's limits): out of its old usage plan first (a key is in one
 * plan per stage). A pooled Free key moving to a paying plan gets an API key of its own; a key with its own API key
 * keeps it, on a Free plan too (cached authorizer results still name it), and a pooled key moving within the pooled
 * plans touches no API Gateway API. Enterprise keys share their bracket's usage plan (brackets.ts): new limits in the
 * same bracket touch no API Gateway API, another bracket is a move between plans.
 * A key already on that plan with those limits is left alone: nothing is written, and `changed` says so.
 *
 * After the record changes: what the functions told the gateway on the old limits (a spent day) is cleared, today's
 * counts are carried to the new limits' shards, and a usage plan the key left is deleted. Each of these is safe to
 * repeat; one that fails is reported, and `keys purge` (a left usage plan) or `keys unban` (the standing) finishes it.
 */
export async function setPlan(ctx: AdminContext, keyId: string, input: PlanInput): Promise<PlanChange> {
  if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
  const limits = checkLimits(input.plan, input.perMinute, input.perDay);
  const first = await ctx.find(keyId);
  if (first.status === 'active' && first.plan === input.plan && sameLimits(first.limits, limits))
    return { ...view(first), changed: false };
  // A usage plan an earlier move left behind goes first: the record names one at a time.
  if (first.retiredUsagePlanId) await retire(ctx, first);
  const { store } = ctx.deps;
  let before: KeyRecord | undefined;
  const updated = await ctx.onLatest(keyId, async (record) => {
    if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
    before = record;
    if (record.plan === input.plan && sameLimits(record.limits, limits)) return undefined;
    const move = planMove(ctx, record, input.plan, limits);
    let next: KeyRecord | undefined;
    // A conflict in the last step undoes the gateway steps; onLatest then starts again from the new record.
    await saga([
      ...move.steps,
      {
        run: async () => {
          const kept = ownPlanOf(move.chosen);
          // A key leaving a plan of its own (from before brackets): it is deleted after the move.
          const retired = record.usagePlanId ? { retiredUsagePlanId: record.usagePlanId } : {};
          const removed = [...(limits ? [] : ['limits']), ...(kept.usagePlanId ? [] : ['usagePlanId'])];
          const changes = {
            plan: input.plan,
            ...(limits ? { limits } : {}),
            ...kept,
            ...retired,
            ...(move.apiKeyId() && !record.apiGatewayKeyId ? { apiGatewayKeyId: move.apiKeyId() } : {}),
          };
          next = await store.update(record, changes, removed);
        },
      },
    ]);
    return next!;
  });
  if (!updated) return { ...view(before!), changed: false };
  await afterChange(ctx, before!, updated);
  return { ...view(updated.retiredUsagePlanId ? await ctx.find(keyId) : updated), changed: true };
}

/** The gateway steps of a move from `record`'s plan to `plan`. */
function planMove(ctx: AdminContext, record: KeyRecord, plan: PlanName, limits: PlanLimits | undefined) {
  const { gateway, usagePlans, stage } = ctx.deps;
  const pooled = isPooledPlan(record.plan) && !record.apiGatewayKeyId;
  let apiKeyId = record.apiGatewayKeyId ?? '';
  const chosen = usagePlanStep(ctx, plan, limits);
  const result = (steps: SagaStep[]) => ({ chosen: chosen.chosen, apiKeyId: () => apiKeyId, steps });
  // Enterprise limits within the same bracket: the same usage plan, nothing to do at the gateway.
  if (
    plan === 'enterprise' &&
    record.plan === 'enterprise' &&
    !record.usagePlanId &&
    enterpriseBracket(limits!).id === enterpriseBracket(limitsOf(record)!).id
  )
    return result([]);
  if (pooled && isPooledPlan(plan)) return result([]);
  if (pooled)
    return result([chosen.step, ...ownApiKeySteps(ctx, record.keyId, chosen.chosen, (id) => (apiKeyId = id))]);
  // The plan it is on: its own (an Enterprise key from before brackets), its bracket's, or its standard plan's.
  let old: string | undefined;
  const oldPlan = async () =>
    (old ??=
      record.usagePlanId ??
      (record.plan === 'enterprise'
        ? ((await gateway.findPlan(bracketPlanName(stage, enterpriseBracket(limitsOf(record)!)))) ?? '')
        : (usagePlans[record.plan] ?? '')));
  return result([
    chosen.step,
    {
      run: async () => {
        const id = await oldPlan();
        if (id) await gateway.detach(apiKeyId, id);
      },
      undo: async () => {
        const id = await oldPlan();
        if (id) await gateway.attach(apiKeyId, id);
      },
      made: () => `API key ${apiKeyId} off its usage plan ${old}`,
    },
    {
      run: () => gateway.attach(apiKeyId, chosen.chosen.id),
      undo: () => gateway.detach(apiKeyId, chosen.chosen.id),
      made: () => `API key ${apiKeyId} on usage plan ${chosen.chosen.id}`,
    },
  ]);
}

/**
 * What follows a change of plan or limits, each step safe to repeat: the key's standing is cleared (a spent day was
 * decided on the old limits; the authorizer would keep naming the spent-keys API key until the day ends), today's
 * counts follow the new shard layout, and the usage plan the key left is deleted.
 */
async function afterChange(ctx: AdminContext, before: KeyRecord, after: KeyRecord): Promise<void> {
  const failures: string[] = [];
  await ctx.deps.store
    .clearStanding(after.hash)
    .catch((err: unknown) =>
      failures.push(
        `its standing at the gateway was not cleared (${describeError(err)}): run \`keys unban ${after.keyId}\``,
      ),
    );
  if (ctx.deps.carryCounts) {
    const from = limitsOf(before);
    const to = limitsOf(after);
    if (from && to)
      await ctx.deps
        .carryCounts(after.keyId, from, to, ctx.now())
        .catch((err: unknown) =>
          failures.push(
            `today's counts were not carried to the new limits (${describeError(err)}): run the same set-plan again`,
          ),
        );
  }
  if (after.retiredUsagePlanId)
    await retire(ctx, after).catch((err: unknown) =>
      failures.push(
        `its old usage plan ${after.retiredUsagePlanId} is not deleted yet (${describeError(err)}): \`keys purge\` deletes it`,
      ),
    );
  if (failures.length)
    throw new AdminError(`key ${after.keyId} is now on ${after.plan}, but ${failures.join('; and ')}`);
}

const describeError = (err: unknown) =>
  err instanceof AdminError ? err.message : `${(err as Error)?.name}: ${(err as Error)?.message}`;

/** Deletes the usage plan a key left and forgets it on the record (a plan already deleted counts as deleted). */
export async function retire(ctx: AdminContext, record: KeyRecord): Promise<void> {
  const planId = record.retiredUsagePlanId;
  if (!planId) return;
  await ctx.deps.gateway.deletePlan(planId);
  await ctx.onLatest(record.keyId, async (latest) =>
    latest.retiredUsagePlanId === planId ? ctx.deps.store.update(latest, {}, ['retiredUsagePlanId']) : latest,
  );
}
