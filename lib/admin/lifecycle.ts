/**
 * The commands that change keys: create, revoke, rotate, set-plan, purge. Each orders its steps as the module
 * comment of service.ts describes (API Gateway first with rollback, DynamoDB last; writes conditional on the version
 * read, re-applied by onLatest when another write came first).
 */
import { randomUUID } from 'node:crypto';
import { PLANS, type PlanName } from '../../contract/plans.ts';
import { isPooledPlan } from '../../contract/key-pool.ts';
import { generateKey, generateKeyId, hashKey, usageIdentifierKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { ownPlanOf, usagePlanStep, type AdminContext, type ChosenPlan } from './context.ts';
import { AdminError } from './ports.ts';
import { checkLimits, checkOwner, saga, view, type KeyView } from './rules.ts';

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
  const plan = usagePlanStep(ctx, input.plan, keyId, limits);
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
      undo: () => gateway.deleteKey(apiKeyId),
    },
    { run: () => gateway.attach(apiKeyId, chosen.id), undo: () => gateway.detach(apiKeyId, chosen.id) },
  ];
}

/**
 * Marks the key revoked: the authorizer refuses it from now on (after its cache TTL). Its API Gateway key stays
 * (see `purge`): a cached result of the authorizer still names it until the TTL ends. Revoking twice is a no-op.
 */
export async function revoke(ctx: AdminContext, keyId: string): Promise<KeyView> {
  const revokedAt = new Date(ctx.now()).toISOString();
  return ctx.onLatest(keyId, async (record) =>
    record.status === 'revoked'
      ? view(record)
      : view(await ctx.deps.store.update(record, { status: 'revoked', revokedAt })),
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

/**
 * Moves a key to another plan: out of its old usage plan first (a key is in one plan per stage). A pooled Free key
 * moving to a paying plan gets an API key of its own; a key with its own API key keeps it, on a Free plan too (cached
 * authorizer results still name it), and a pooled key moving within the pooled plans touches no API Gateway API.
 */
export async function setPlan(ctx: AdminContext, keyId: string, input: PlanInput): Promise<KeyView> {
  if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
  const limits = checkLimits(input.plan, input.perMinute, input.perDay);
  const { store, gateway, usagePlans } = ctx.deps;
  return ctx.onLatest(keyId, async (record) => {
    if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
    const pooled = isPooledPlan(record.plan) && !record.apiGatewayKeyId;
    let apiKeyId = record.apiGatewayKeyId ?? '';
    const oldPlanId = record.usagePlanId ?? usagePlans[record.plan] ?? '';
    const plan = usagePlanStep(ctx, input.plan, keyId, limits);
    const gatewaySteps =
      pooled && isPooledPlan(input.plan)
        ? []
        : pooled
          ? [plan.step, ...ownApiKeySteps(ctx, keyId, plan.chosen, (id) => (apiKeyId = id))]
          : [
              plan.step,
              { run: () => gateway.detach(apiKeyId, oldPlanId), undo: () => gateway.attach(apiKeyId, oldPlanId) },
              {
                run: () => gateway.attach(apiKeyId, plan.chosen.id),
                undo: () => gateway.detach(apiKeyId, plan.chosen.id),
              },
            ];
    let updated: KeyRecord | undefined;
    // A conflict in the last step undoes the gateway steps; onLatest then starts again from the new record.
    await saga([
      ...gatewaySteps,
      {
        run: async () => {
          const own = ownPlanOf(plan.chosen);
          const removed = [...(limits ? [] : ['limits']), ...(own.usagePlanId ? [] : ['usagePlanId'])];
          const changes = {
            plan: input.plan,
            ...(limits ? { limits } : {}),
            ...own,
            ...(apiKeyId && !record.apiGatewayKeyId ? { apiGatewayKeyId: apiKeyId } : {}),
          };
          updated = await store.update(record, changes, removed);
        },
      },
    ]);
    if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId).catch(() => undefined);
    return view(updated!);
  });
}

/**
 * Deletes the API Gateway key (and Enterprise usage plan) of every key revoked longer ago than the grace period
 * (at least the authorizer cache TTL); the records stay, revoked. Returns the keys it cleaned.
 */
export async function purge(ctx: AdminContext): Promise<KeyView[]> {
  const { store, gateway } = ctx.deps;
  const cutoff = ctx.now() - (ctx.deps.revokedKeyGraceMs ?? 120_000);
  const due = (await store.list()).filter(
    (r) =>
      r.status === 'revoked' &&
      (r.apiGatewayKeyId || r.usagePlanId) &&
      Date.parse(r.revokedAt ?? r.createdAt) <= cutoff,
  );
  const cleaned: KeyView[] = [];
  for (const stale of due) {
    cleaned.push(
      await ctx.onLatest(stale.keyId, async (record) => {
        if (record.apiGatewayKeyId) await gateway.deleteKey(record.apiGatewayKeyId);
        if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId);
        return view(await store.update(record, {}, ['apiGatewayKeyId', 'usagePlanId']));
      }),
    );
  }
  return cleaned;
}
