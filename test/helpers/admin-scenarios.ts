/**
 * Keys in the states admin commands start from, made directly in DynamoDB Local (and the fake control plane) as the
 * functions or release 3357b0c left them: a spent day, a ban, today's counts on one shard, and what 3357b0c made at
 * the gateway (API keys and usage plans of keys' own, its Free pool).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import { limitsOf } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { API, STAGE, type World } from './control-plane-world.ts';

/** A new key of `plan` (made with no fault), its id. */
export const made = (w: World, plan: PlanName, limits?: PlanLimits) =>
  w.admin.create({ owner: w.owner, plan, ...(limits ?? {}) }).then((c) => c.record.keyId);

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
  await noteStanding(w.plain.storage!, record.hash, { spentDay: windowsAt(w.fake.now()).dayStart });
}

/** A key the limiter banned for a flood of 429s, 10 minutes from now, and the gateway told so. */
export async function bannedKey(w: World, keyId: string) {
  const record = (await w.plain.store.getById(keyId))!;
  const banUntil = Math.floor(w.fake.now() / 1000) + 600;
  await dayCounters(w, keyId, { d: 5, banUntil });
  await noteStanding(w.plain.storage!, record.hash, { bannedUntil: banUntil });
}

/** Another stage's API in the same account (production's), whose usage plans and keys are not this stage's. */
export const OTHER_API = { apiId: 'api999', stage: 'v1' } as const;

let values = 0;
/** An API key value as 3357b0c's tool made them (derived from a key id; unique per account). */
const value = () => `animalstore${String(++values).padStart(32, '0')}`;

/**
 * What release 3357b0c left at the gateway of the stage (its admin tool's, and its stack's Free pool, which the
 * releases since keep off their templates without deleting it), and beside it what belongs to others: what
 * `keys remove-release-api-keys` deletes (`gone`), and what it must leave (`stays`: another stage's plan and key, a
 * key also on another stage's plan, which only leaves this stage's, and a plan serving both, which only loses this one).
 */
export function releaseLeftovers(w: World) {
  const { fake, stack } = w;
  const ours = [{ ...API }];
  const other = [{ ...OTHER_API }];
  // Paying keys' API keys of their own, on the stack's Pro and Business usage plans.
  const ownKeys = (['pro', 'pro', 'business'] as const).map((plan, i) =>
    fake.seedKey(`animal-store-key_own${i}`, value(), [stack.plans[plan]]),
  );
  // An Enterprise key's usage plan of its own with its API key, and an Enterprise bracket's with its members.
  const ownPlan = fake.seedPlan(`animal-store-${STAGE}-enterprise-key_ent0`, ours);
  const ownPlanKey = fake.seedKey('animal-store-key_ent0', value(), [ownPlan]);
  const bracket = fake.seedPlan(`animal-store-${STAGE}-enterprise-r10-b300-q100000`, ours);
  const members = [0, 1].map((m) =>
    fake.seedKey(`animal-store-${STAGE}-enterprise-r10-b300-q100000-m${m}`, value(), [bracket]),
  );
  // 3357b0c's Free pool, kept when a later release dropped it from the template.
  const pool = fake.seedPlan(`AnimalStore-${STAGE}-FreePool`, ours);
  const poolMembers = [0, 1].map((m) => fake.seedKey(`${STAGE}-FreePoolMember000${m}`, value(), [pool]));
  // A plan 3357b0c's purge took off the stage and stopped before deleting.
  const stageless = fake.seedPlan(`animal-store-${STAGE}-enterprise-key_ent1`, []);
  // Another stage's.
  const otherPlan = fake.seedPlan('AnimalStore-production-Pro', other);
  const otherKey = fake.seedKey('production-ProPlanKey', value(), [otherPlan]);
  const shared = fake.seedKey('animal-store-key_shared', value(), [otherPlan, stack.plans.business]);
  const both = fake.seedPlan(`animal-store-${STAGE}-enterprise-both`, [...ours, ...other]);
  return {
    gone: {
      apiKeys: [...ownKeys, ownPlanKey, ...members, ...poolMembers],
      usagePlans: [ownPlan, bracket, pool, stageless],
    },
    stays: { apiKeys: [otherKey, shared], usagePlans: [otherPlan, both] },
    shared,
    both,
  };
}
