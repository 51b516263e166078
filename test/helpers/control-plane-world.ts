/**
 * The admin tool on a fake stage, for one run of an admin command: the test's records on DynamoDB Local (its storage
 * ports counted and faultable: storage-faults.ts) and, for `keys remove-release-api-keys`, the stage's stack as
 * CloudFormation describes it and a fake of API Gateway's control plane (control-plane-fake.ts) holding what the stack
 * made there: a usage plan per plan, each with its plan key. And the inventory check made after every run: what is
 * wrong between the records and the limiter's items (standing items, counts layout), and at the gateway.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PLANS, PLAN_NAMES, limiterShards, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { MAX_SHARDS } from '../../lambdas/storage/limit-store.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { pacedControlPlane, type ControlPlane, type DeployedStack } from '../../lib/admin/release-api-keys.ts';
import type { Sender } from '../../lib/admin/pacing.ts';
import { keyAdmin, type AdminDeps, type KeyAdmin } from '../../lib/admin/service.ts';
import { FakeControlPlane } from './control-plane-fake.ts';
import { StorageFaults } from './storage-faults.ts';

export const STAGE = 'staging';
/** The stage's authorizer cache TTL, as the removal waits it out after a deploy. */
export const CACHE_TTL_MS = 60_000;
/** The stage's API and stage name at the fake (what the stack's RestApi and Stage resources are). */
export const API = { apiId: 'api123', stage: 'v1' } as const;

/** The stack at the fake: each plan's usage plan and API key, and what CloudFormation says of it (a test edits it). */
export interface FakeStack {
  readonly plans: Record<PlanName, string>;
  readonly keys: Record<PlanName, string>;
  view: DeployedStack;
  /** The next read of the stack fails (CloudFormation unreachable), once. */
  failNextRead: boolean;
}

export interface World {
  fake: FakeControlPlane;
  storage: StorageFaults;
  /** The admin's dependencies (storage counted and faultable), and the same without faults, for the checks. */
  deps: AdminDeps;
  plain: AdminDeps;
  admin: KeyAdmin;
  owner: string;
  stack: FakeStack;
  /** The stage's control plane as the removal command gets it: the stack, and `gateway` (default: the fake, paced). */
  controlPlane(gateway?: Sender): ControlPlane;
}

/** The AWS principal the fake stage's admin runs as (what the tool's STS GetCallerIdentity would return). */
export const STAGE_PRINCIPAL = 'arn:aws:sts::123456789012:assumed-role/AnimalStoreAdmin/alice@example.com';

/**
 * A noon years ahead of any run: DynamoDB Local deletes items whose TTL attribute (`expiresAt`) is past by the real
 * clock, in a sweep every few seconds. A world dated in the past lost its standing and counter items to that sweep
 * part-way through a run, at random (a ban written, then gone before the check).
 */
export const WORLD_START_MS = Date.UTC(2036, 10, 22, 12);

/** What this release's stack makes at the gateway, in the fake, and its CloudFormation view: settled, this release. */
function stackOf(fake: FakeControlPlane): FakeStack {
  const plans = {} as Record<PlanName, string>;
  const keys = {} as Record<PlanName, string>;
  const resources: DeployedStack['resources'][number][] = [
    { logicalId: 'RestApi', type: 'AWS::ApiGateway::RestApi', physicalId: API.apiId },
    { logicalId: 'ApiStage', type: 'AWS::ApiGateway::Stage', physicalId: API.stage },
  ];
  const template: Record<string, { Type: string; Properties?: object }> = {
    RestApi: { Type: 'AWS::ApiGateway::RestApi' },
    ApiStage: { Type: 'AWS::ApiGateway::Stage' },
  };
  for (const plan of PLAN_NAMES) {
    const name = PLANS[plan].displayName;
    plans[plan] = fake.seedPlan(`AnimalStore-${STAGE}-${name}`);
    keys[plan] = fake.seedKey(`${STAGE}-${name}PlanKey`, planUsageKeyValue(STAGE, plan), [plans[plan]]);
    template[`UsagePlan${name}`] = { Type: 'AWS::ApiGateway::UsagePlan' };
    template[`${name}PlanKey`] = {
      Type: 'AWS::ApiGateway::ApiKey',
      Properties: { Value: planUsageKeyValue(STAGE, plan) },
    };
    resources.push(
      { logicalId: `UsagePlan${name}`, type: 'AWS::ApiGateway::UsagePlan', physicalId: plans[plan] },
      { logicalId: `${name}PlanKey`, type: 'AWS::ApiGateway::ApiKey', physicalId: keys[plan] },
    );
  }
  return {
    plans,
    keys,
    view: {
      name: `AnimalStore-${STAGE}`,
      status: 'UPDATE_COMPLETE',
      template: { Resources: template },
      resources,
      // Deployed the day before the world's start: long past any cached authorizer answer.
      changedAt: fake.now() - 86_400_000,
    },
    failNextRead: false,
  };
}

/** The admin on a fresh fake stage (its clock the fake's) and `local`'s store, as an owner of its own. */
export function controlPlaneWorld(local: AdminDeps, startMs = WORLD_START_MS): World {
  if (startMs < Date.now() + 7 * 86_400_000)
    throw new Error("a world dated before next week meets DynamoDB Local's TTL sweep");
  const fake = new FakeControlPlane(startMs);
  const stack = stackOf(fake);
  const owner = `cp-${randomUUID()}`;
  const controlPlane = (gateway: Sender = pacedControlPlane(fake, fake)): ControlPlane => ({
    async stack() {
      if (stack.failNextRead) {
        stack.failNextRead = false;
        throw Object.assign(new Error('Rate exceeded'), { name: 'Throttling' });
      }
      return structuredClone(stack.view);
    },
    gateway,
    cacheTtlMs: CACHE_TTL_MS,
  });
  const plain: AdminDeps = {
    ...local,
    store: ownStore(local.store, owner),
    stage: STAGE,
    now: fake.now,
    // What STS GetCallerIdentity answers on a stage: an assumed role's session, naming the person.
    whoami: async () => STAGE_PRINCIPAL,
    controlPlane: async () => controlPlane(),
  };
  const storage = new StorageFaults();
  const deps = storage.around(plain);
  return { fake, storage, deps, plain, admin: keyAdmin(deps), owner, stack, controlPlane };
}

/**
 * The store as one world's own: the worlds of a test file share DynamoDB Local's tables, so a world's listings see
 * only its owner's records, as a table of its own would hold.
 */
function ownStore(store: AdminDeps['store'], owner: string): AdminDeps['store'] {
  return { ...store, listPage: (filter, limit, after) => store.listPage({ owner, ...filter }, limit, after) };
}

/** The records of the world's owner, on the store its admin writes. */
export const recordsOf = async ({ plain, owner }: World): Promise<KeyRecord[]> =>
  (await plain.store.list()).filter((r) => r.owner === owner);

/** What is wrong at the gateway: on the stage, anything but the stack's usage plans, each with its one plan key. */
export function gatewayProblems({ fake, stack }: World): string[] {
  const found: string[] = [];
  const ours = `${API.apiId}:${API.stage}`;
  const stackPlans = new Map(PLAN_NAMES.map((p) => [stack.plans[p], stack.keys[p]]));
  for (const p of fake.plans.values()) {
    const stages = p.apiStages.map((s) => `${s.apiId}:${s.stage}`);
    if (!stages.length && p.name.startsWith(`animal-store-${STAGE}-`)) found.push(`usage plan ${p.name} on no stage`);
    if (!stages.includes(ours)) continue;
    if (!stackPlans.has(p.id)) found.push(`usage plan ${p.id} (${p.name}) is not the stack's`);
    else if ([...p.keys].join() !== stackPlans.get(p.id))
      found.push(`usage plan ${p.name} holds ${[...p.keys].join(', ')}, not its plan key alone`);
  }
  for (const plan of PLAN_NAMES) if (!fake.keys.has(stack.keys[plan])) found.push(`plan key of ${plan} deleted`);
  return found;
}

/** What is wrong in the limiter's items: a standing or a counts layout the record does not call for. */
async function limiterProblems(w: World, records: KeyRecord[]): Promise<string[]> {
  const { plain } = w;
  const found: string[] = [];
  const win = windowsAt(plain.now!());
  for (const r of records) {
    const limits = limitsOf(r);
    if (r.status !== 'active' || !limits) continue;
    const through = r.unbannedThrough ?? 0;
    const u = await plain.limits.usage(r.keyId, limits, win);
    const st = await plain.store.readStanding(r.hash);
    if (st.spentDay === win.dayStart && u.dayCount < limits.perDay)
      found.push(`${r.keyId}: spent at the gateway with ${u.dayCount} of ${limits.perDay} used`);
    if (st.bannedUntil && st.bannedUntil > win.nowSec && st.bannedUntil <= through)
      found.push(`${r.keyId}: banned at the gateway after its unban`);
    if (u.banUntil && u.banUntil > win.nowSec && u.banUntil <= through)
      found.push(`${r.keyId}: banned on the limiter's counters after its unban`);
    const want = r.bannedUntil && r.bannedUntil > win.nowSec && r.bannedUntil > through ? r.bannedUntil : 0;
    if (want && !((st.bannedUntil ?? 0) >= want && (u.banUntil ?? 0) >= want))
      found.push(
        `${r.keyId}: the admin's ban (until ${want}) is not applied: gateway standing ${st.bannedUntil ?? 'none'}, limiter's counters ${u.banUntil ?? 'none'}`,
      );
    for (let s = limiterShards(limits); s < MAX_SHARDS; s++) {
      const item = await plain.storage!.doc.send(
        new GetCommand({ TableName: plain.storage!.tables.state, Key: shardKey(r.keyId, win.dayStart, s) }),
      );
      if (item.Item?.d) found.push(`${r.keyId}: ${item.Item.d} of today's counts on shard ${s}, outside its layout`);
    }
  }
  return found;
}

/** Everything wrong between the records and the inventory (the gateway and the limiter): [] when consistent. */
export async function problems(w: World): Promise<string[]> {
  return [...gatewayProblems(w), ...(await limiterProblems(w, await recordsOf(w)))];
}
