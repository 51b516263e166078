/**
 * Key administration: create, list, show, revoke, rotate, set-plan, purge, usage. Every command that touches both
 * DynamoDB and API Gateway orders its steps so a failure never leaves a key half-written: API Gateway first with
 * rollback on failure, DynamoDB (what the authorizer reads) last.
 *
 * Each key has one API Gateway API key for its whole life, valued from its key id (usageIdentifierKey), never from
 * its secret. Rotation changes only the DynamoDB record; revocation leaves the API Gateway key in its usage plan
 * until `purge`, after the authorizer cache TTL: a cached authorizer result names that API key, and API Gateway
 * answers 403 to a request whose usageIdentifierKey names a deleted key or one in no usage plan of the stage.
 *
 * Record writes are conditional on the version read: a command that finds the record changed re-reads it and
 * applies itself again, so a concurrent revoke or set-plan is never undone.
 */
import { PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { randomUUID } from 'node:crypto';
import {
  generateKey,
  generateKeyId,
  hashKey,
  limitsOf,
  StaleKeyRecordError,
  usageIdentifierKey,
  type KeyRecord,
} from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { AdminError, type AdminDeps } from './ports.ts';
import { checkLimits, saga, view, type KeyView } from './rules.ts';

export { AdminError, type AdminDeps, type KeyAdminStorePort } from './ports.ts';
export type { KeyView } from './rules.ts';
import { minuteCounts } from './usage-chart.ts';

/** Attempts of a command whose record keeps changing under it (another admin at work) before it gives up. */
const MAX_ATTEMPTS = 5;

export function keyAdmin(deps: AdminDeps) {
  const now = deps.now ?? Date.now;
  const { store, gateway } = deps;

  async function find(keyId: string): Promise<KeyRecord> {
    const record = await store.getById(keyId);
    if (!record) throw new AdminError(`no key with id ${keyId}`);
    return record;
  }

  /** Reads the key and applies a change to that version; when another write came first, reads again and retries. */
  async function onLatest<T>(keyId: string, apply: (record: KeyRecord) => Promise<T>): Promise<T> {
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

  /** The usage plan for a plan (a new per-customer one for Enterprise). */
  async function planFor(
    plan: PlanName,
    keyId: string,
    limits?: PlanLimits,
  ): Promise<{ id: string; created: boolean }> {
    if (plan === 'enterprise')
      return { id: await gateway.createPlan(`animal-store-${deps.stage}-enterprise-${keyId}`, limits!), created: true };
    return { id: deps.usagePlans[plan] ?? '', created: false };
  }

  return {
    async create(input: {
      owner: string;
      plan: PlanName;
      perMinute?: number;
      perDay?: number;
    }): Promise<{ key: string; record: KeyView }> {
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
        version: 1,
        writeId,
      });
      const writeId = randomUUID();
      await saga([
        {
          run: async () => (plan = await planFor(input.plan, keyId, limits)),
          undo: () => (plan.created ? gateway.deletePlan(plan.id) : Promise.resolve()),
        },
        // The API key's value is derived from the key id (never the secret): it stays the same across rotations.
        {
          run: async () => (apiKeyId = await gateway.createKey(`animal-store-${keyId}`, usageIdentifierKey(keyId))),
          undo: () => gateway.deleteKey(apiKeyId),
        },
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

    /**
     * Marks the key revoked: the authorizer refuses it from now on (after its cache TTL). Its API Gateway key stays
     * (see `purge`): a cached result of the authorizer still names it until the TTL ends. Revoking twice is a no-op.
     */
    async revoke(keyId: string): Promise<KeyView> {
      const revokedAt = new Date(now()).toISOString();
      return onLatest(keyId, async (record) =>
        record.status === 'revoked' ? view(record) : view(await store.update(record, { status: 'revoked', revokedAt })),
      );
    },

    /**
     * A new secret on the same key id, plan and API Gateway key. The old secret stops working at once (in the cloud,
     * once cached authorizer results expire; until then those results still name the same, existing API key).
     */
    async rotate(keyId: string): Promise<{ key: string; record: KeyView }> {
      const rotatedAt = new Date(now()).toISOString();
      return onLatest(keyId, async (record) => {
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
        await store.replaceHash(record, next);
        return { key, record: view(next) };
      });
    },

    /**
     * Deletes the API Gateway key (and Enterprise usage plan) of every key revoked longer ago than the grace period
     * (at least the authorizer cache TTL); the records stay, revoked. Returns the keys it cleaned.
     */
    async purge(): Promise<KeyView[]> {
      const cutoff = now() - (deps.revokedKeyGraceMs ?? 120_000);
      const due = (await store.list()).filter(
        (r) =>
          r.status === 'revoked' &&
          (r.apiGatewayKeyId || r.usagePlanId) &&
          Date.parse(r.revokedAt ?? r.createdAt) <= cutoff,
      );
      const cleaned: KeyView[] = [];
      for (const stale of due) {
        cleaned.push(
          await onLatest(stale.keyId, async (record) => {
            if (record.apiGatewayKeyId) await gateway.deleteKey(record.apiGatewayKeyId);
            if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId);
            return view(await store.update(record, {}, ['apiGatewayKeyId', 'usagePlanId']));
          }),
        );
      }
      return cleaned;
    },

    /** Moves a key to another plan: out of its old usage plan first (a key is in one plan per stage). */
    async setPlan(keyId: string, input: { plan: PlanName; perMinute?: number; perDay?: number }): Promise<KeyView> {
      if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
      const limits = checkLimits(input.plan, input.perMinute, input.perDay);
      return onLatest(keyId, async (record) => {
        if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
        const apiKeyId = record.apiGatewayKeyId ?? '';
        const oldPlanId = record.usagePlanId ?? deps.usagePlans[record.plan] ?? '';
        let plan = { id: '', created: false };
        let updated: KeyRecord | undefined;
        // A conflict in the last step undoes the gateway steps; onLatest then starts again from the new record.
        await saga([
          {
            run: async () => (plan = await planFor(input.plan, keyId, limits)),
            undo: () => (plan.created ? gateway.deletePlan(plan.id) : Promise.resolve()),
          },
          { run: () => gateway.detach(apiKeyId, oldPlanId), undo: () => gateway.attach(apiKeyId, oldPlanId) },
          { run: () => gateway.attach(apiKeyId, plan.id), undo: () => gateway.detach(apiKeyId, plan.id) },
          {
            run: async () =>
              (updated = await store.update(
                record,
                {
                  plan: input.plan,
                  ...(limits ? { limits } : {}),
                  ...(plan.created && plan.id ? { usagePlanId: plan.id } : {}),
                },
                [...(limits ? [] : ['limits']), ...(plan.created && plan.id ? [] : ['usagePlanId'])],
              )),
          },
        ]);
        if (record.usagePlanId) await gateway.deletePlan(record.usagePlanId).catch(() => undefined);
        return view(updated!);
      });
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
        ...(deps.history
          ? {
              history: {
                dayStart: w.dayStart,
                nowMinute: w.minuteStart,
                ...minuteCounts(await deps.history(record.keyId, w), u.dayCount),
              },
            }
          : {}),
      };
    },
  };
}
export type KeyAdmin = ReturnType<typeof keyAdmin>;
