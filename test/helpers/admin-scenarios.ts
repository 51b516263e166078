/**
 * Keys in the states admin commands start from, made directly in the fake control plane and DynamoDB Local as
 * earlier versions of the tool or the functions left them: a key with an API key (and an Enterprise usage plan) of
 * its own from before pools, a spent day, a ban, today's counts on one shard.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { usagePlanThrottle, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { limitsOf, usageIdentifierKey } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { STAGE, type World } from './control-plane-world.ts';

/** A new key of `plan` (made with no fault), its id. */
export const made = (w: World, plan: PlanName, limits?: PlanLimits) =>
  w.admin.create({ owner: w.owner, plan, ...(limits ?? {}) }).then((c) => c.record.keyId);

/** A paying key as made before pools: an API key of its own on its plan's usage plan (or a usage plan of its own). */
export async function legacyKey(w: World, plan: 'pro' | 'business' | 'enterprise', limits?: PlanLimits) {
  const id = await made(w, plan, limits);
  const record = (await w.plain.store.getById(id))!;
  const apiKey = await w.plain.gateway.createKey(`animal-store-${id}`, usageIdentifierKey(id));
  let own: string | undefined;
  if (plan === 'enterprise') {
    own = w.fake.seedPlan(`animal-store-${STAGE}-enterprise-${id}`);
    const t = usagePlanThrottle(limits!);
    Object.assign(w.fake.plans.get(own)!, { throttle: t, quota: { limit: t.quotaPerDay, period: 'DAY' } });
  }
  w.fake.plans.get(own ?? w.usagePlans[plan as 'pro'])!.keys.add(apiKey);
  // As the old tool wrote it: never reconciled.
  await w.plain.store.update(record, { apiGatewayKeyId: apiKey, ...(own ? { usagePlanId: own } : {}) }, [
    'reconciledVersion',
  ]);
  return id;
}

/** `keyId`'s day counters as the limiter writes them: `d` today on shard `shard`, a ban until `banUntil`. */
export async function dayCounters(w: World, keyId: string, c: { d: number; shard?: number; banUntil?: number }) {
  const { storage } = w.plain;
  const win = windowsAt(w.fake.now());
  await storage!.doc.send(
    new PutCommand({
      TableName: storage!.tables.state,
      Item: {
        ...shardKey(keyId, win.dayStart, c.shard ?? 0),
        ms: win.minuteStart - 60,
        m: 0,
        d: c.d,
        ...(c.banUntil ? { banUntil: c.banUntil } : {}),
      },
    }),
  );
}

/** A key whose day is spent: counted to its limit, and the gateway told so (as a function that refused it does). */
export async function spentKey(w: World, keyId: string) {
  const record = (await w.plain.store.getById(keyId))!;
  await dayCounters(w, keyId, { d: limitsOf(record)!.perDay });
  await w.plain.store.noteStanding(record.hash, { spentDay: windowsAt(w.fake.now()).dayStart });
}

/** A key the limiter banned for a flood of 429s, 10 minutes from now, and the gateway told so. */
export async function bannedKey(w: World, keyId: string) {
  const record = (await w.plain.store.getById(keyId))!;
  const banUntil = Math.floor(w.fake.now() / 1000) + 600;
  await dayCounters(w, keyId, { d: 5, banUntil });
  await w.plain.store.noteStanding(record.hash, { bannedUntil: banUntil });
}
