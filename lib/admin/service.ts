/**
 * Key administration: create, list, show, revoke, rotate, set-plan, usage. Every command that touches both
 * DynamoDB and API Gateway orders its steps so a failure never leaves a key half-written: API Gateway first with
 * rollback on failure, DynamoDB (what the authorizer reads) last; revocation the other way round, so a key is never
 * left active by a failure.
 */
import { MAX_CUSTOM_LIMITS, PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { generateKey, generateKeyId, hashKey, limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt, type LimitStore } from '../../lambdas/domain/rate-limit.ts';
import type { KeyGateway } from './gateway.ts';

/** An error the admin prints as one line and exits non-zero for. */
export class AdminError extends Error {}

export interface KeyAdminStorePort {
  put(record: KeyRecord): Promise<void>;
  getById(keyId: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  update(hash: string, changes: Partial<Omit<KeyRecord, 'hash' | 'keyId'>>, remove?: string[]): Promise<KeyRecord>;
  replaceHash(oldHash: string, next: KeyRecord): Promise<void>;
}

export interface AdminDeps {
  readonly store: KeyAdminStorePort;
  readonly limits: LimitStore;
  readonly gateway: KeyGateway;
  /** Usage plan id per standard plan on the target stage (empty locally). */
  readonly usagePlans: Partial<Record<PlanName, string>>;
  readonly stage: string;
  readonly now?: () => number;
}

/** A key record as shown to admins: never the hash. */
export type KeyView = Omit<KeyRecord, 'hash'> & { limits: PlanLimits | undefined };
const view = ({ hash: _hash, ...rest }: KeyRecord): KeyView => ({ ...rest, limits: limitsOf(rest) });

function checkLimits(plan: PlanName, perMinute?: number, perDay?: number): PlanLimits | undefined {
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) throw new AdminError(`--per-minute/--per-day apply to the enterprise plan only (${plan} has fixed limits)`);
    return undefined;
  }
  if (perMinute === undefined || perDay === undefined) throw new AdminError('the enterprise plan needs --per-minute N and --per-day N');
  for (const [name, v, max] of [['--per-minute', perMinute, MAX_CUSTOM_LIMITS.perMinute], ['--per-day', perDay, MAX_CUSTOM_LIMITS.perDay]] as const) {
    if (!Number.isSafeInteger(v) || v < 1 || v > max) throw new AdminError(`${name} must be a whole number from 1 to ${max}`);
  }
  if (perDay < perMinute) throw new AdminError('--per-day must be at least --per-minute');
  return { perMinute, perDay };
}

/** Runs steps in order; when one fails, undoes the completed ones (last first) and rethrows. */
async function saga(steps: Array<{ run: () => Promise<unknown>; undo?: () => Promise<unknown> }>): Promise<void> {
  const done: Array<() => Promise<unknown>> = [];
  for (const step of steps) {
    try {
      await step.run();
    } catch (err) {
      for (const undo of done.reverse()) await undo().catch(() => undefined);
      throw err;
    }
    if (step.undo) done.push(step.undo);
  }
}

export function keyAdmin(deps: AdminDeps) {
  const now = deps.now ?? Date.now;
  const { store, gateway } = deps;

  async function find(keyId: string): Promise<KeyRecord> {
    const record = await store.getById(keyId);
    if (!record) throw new AdminError(`no key with id ${keyId}`);
    return record;
  }

  /** The usage plan for a plan (a new per-customer one for Enterprise). */
  async function planFor(plan: PlanName, keyId: string, limits?: PlanLimits): Promise<{ id: string; created: boolean }> {
    if (plan === 'enterprise') return { id: await gateway.createPlan(`animal-store-${deps.stage}-enterprise-${keyId}`, limits!), created: true };
    return { id: deps.usagePlans[plan] ?? '', created: false };
  }

  return {
    async create(input: { owner: string; plan: PlanName; perMinute?: number; perDay?: number }): Promise<{ key: string; record: KeyView }> {
      const owner = input.owner?.trim();
      if (!owner) throw new AdminError('--owner is required');
      if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
      const limits = checkLimits(input.plan, input.perMinute, input.perDay);
      const key = generateKey();
      const keyId = generateKeyId();
      let apiKeyId = '';
      let plan = { id: '', created: false };
      const createdAt = new Date(now()).toISOString();
      const record = (): KeyRecord => ({
        hash: hashKey(key),
        keyId,
        owner,
        plan: input.plan,
        ...(limits ? { limits } : {}),
        status: 'active',
        createdAt,
        ...(apiKeyId ? { apiGatewayKeyId: apiKeyId } : {}),
        ...(plan.created && plan.id ? { usagePlanId: plan.id } : {}),
      });
      await saga([
        { run: async () => (plan = await planFor(input.plan, keyId, limits)), undo: () => (plan.created ? gateway.deletePlan(plan.id) : Promise.resolve()) },
        { run: async () => (apiKeyId = await gateway.createKey(`animal-store-${keyId}`, key)), undo: () => gateway.deleteKey(apiKeyId) },
        { run: () => gateway.attach(apiKeyId, plan.id), undo: () => gateway.detach(apiKeyId, plan.id) },
        { run: () => store.put(record()) },
      ]);
      return { key, record: view(record()) };
    },

    async list(filter: { plan?: string; owner?: string } = {}): Promise<KeyView[]> {
      return (await store.list())
        .filter((r) => (!filter.plan || r.plan === filter.plan) && (!filter.owner || r.owner === filter.owner))
        .map(view);
    },

    async show(keyId: string): Promise<KeyView> {
      return view(await find(keyId));
    },

    async revoke(keyId: string): Promise<KeyView> {
      const record = await find(keyId);
      // DynamoDB first: the authorizer stops accepting the key whatever happens to the gateway step.
      const updated = await store.update(record.hash, { status: 'revoked' });
      if (record.apiGatewayKeyId) await gateway.deleteKey(record.apiGatewayKeyId);
      if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId);
      return view(updated);
    },

    /** A new secret on the same key id and plan. The old secret stops working at once (after the authorizer cache). */
    async rotate(keyId: string): Promise<{ key: string; record: KeyView }> {
      const record = await find(keyId);
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}: only active keys can be rotated`);
      const key = generateKey();
      let apiKeyId = '';
      const planId = record.usagePlanId ?? deps.usagePlans[record.plan] ?? '';
      const rotatedAt = new Date(now()).toISOString();
      const next = (): KeyRecord => ({
        ...record,
        hash: hashKey(key),
        rotatedAt,
        ...(apiKeyId ? { apiGatewayKeyId: apiKeyId } : {}),
      });
      await saga([
        { run: async () => (apiKeyId = await gateway.createKey(`animal-store-${keyId}`, key)), undo: () => gateway.deleteKey(apiKeyId) },
        { run: () => gateway.attach(apiKeyId, planId), undo: () => gateway.detach(apiKeyId, planId) },
        { run: () => store.replaceHash(record.hash, next()) },
      ]);
      if (record.apiGatewayKeyId) await gateway.deleteKey(record.apiGatewayKeyId);
      return { key, record: view(next()) };
    },

    /** Moves a key to another plan: out of its old usage plan first (a key is in one plan per stage). */
    async setPlan(keyId: string, input: { plan: PlanName; perMinute?: number; perDay?: number }): Promise<KeyView> {
      if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
      const limits = checkLimits(input.plan, input.perMinute, input.perDay);
      const record = await find(keyId);
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
      const apiKeyId = record.apiGatewayKeyId ?? '';
      const oldPlanId = record.usagePlanId ?? deps.usagePlans[record.plan] ?? '';
      let plan = { id: '', created: false };
      let updated: KeyRecord | undefined;
      await saga([
        { run: async () => (plan = await planFor(input.plan, keyId, limits)), undo: () => (plan.created ? gateway.deletePlan(plan.id) : Promise.resolve()) },
        { run: () => gateway.detach(apiKeyId, oldPlanId), undo: () => gateway.attach(apiKeyId, oldPlanId) },
        { run: () => gateway.attach(apiKeyId, plan.id), undo: () => gateway.detach(apiKeyId, plan.id) },
        {
          run: async () =>
            (updated = await store.update(
              record.hash,
              { plan: input.plan, ...(limits ? { limits } : {}), ...(plan.created && plan.id ? { usagePlanId: plan.id } : {}) },
              [...(limits ? [] : ['limits']), ...(plan.created && plan.id ? [] : ['usagePlanId'])],
            )),
        },
      ]);
      if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId).catch(() => undefined);
      return view(updated!);
    },

    async usage(keyId: string) {
      const record = await find(keyId);
      const w = windowsAt(now());
      const u = await deps.limits.usage(record.keyId, w);
      const limits = limitsOf(record);
      return {
        keyId: record.keyId,
        plan: record.plan,
        limits,
        minute: { count: u.minuteCount, resetsAt: new Date(w.minuteReset * 1000).toISOString() },
        day: { count: u.dayCount, resetsAt: new Date(w.dayReset * 1000).toISOString() },
        bannedUntil: u.banUntil ? new Date(u.banUntil * 1000).toISOString() : null,
      };
    },
  };
}
export type KeyAdmin = ReturnType<typeof keyAdmin>;
