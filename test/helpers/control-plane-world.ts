/**
 * The admin tool on a fresh fake of API Gateway's control plane (control-plane-fake.ts) and the test's records on
 * DynamoDB Local (its storage ports counted and faultable: storage-faults.ts), for one run of an admin command, and
 * the inventory check made after every run: what is wrong between the records (the desired state) and what API
 * Gateway (API keys, usage-plan membership) and the limiter (standing items, counts layout) hold.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { BRACKET_POOL, bracketPoolKeyValue } from '../../contract/key-pool.ts';
import { limiterShards, usagePlanThrottle, type PlanName } from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { MAX_SHARDS } from '../../lambdas/storage/limit-store.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { bracketPlanName, enterpriseBracket } from '../../lib/admin/brackets.ts';
import { awsKeyGateway } from '../../lib/admin/gateway.ts';
import { converged } from '../../lib/admin/reconcile.ts';
import { keyAdmin, type AdminDeps, type KeyAdmin } from '../../lib/admin/service.ts';
import { FakeControlPlane } from './control-plane-fake.ts';
import { StorageFaults } from './storage-faults.ts';

export interface World {
  fake: FakeControlPlane;
  storage: StorageFaults;
  /** The admin's dependencies (storage counted and faultable), and the same without faults, for the checks. */
  deps: AdminDeps;
  plain: AdminDeps;
  admin: KeyAdmin;
  owner: string;
  usagePlans: Record<Exclude<PlanName, 'enterprise'>, string>;
}

export const STAGE = 'staging';
/** The AWS principal the fake stage's admin runs as (what the tool's STS GetCallerIdentity would return). */
export const STAGE_PRINCIPAL = 'arn:aws:sts::123456789012:assumed-role/AnimalStoreAdmin/alice@example.com';
export const GRACE_MS = 120_000;

/**
 * A noon years ahead of any run: DynamoDB Local deletes items whose TTL attribute (`expiresAt`) is past by the real
 * clock, in a sweep every few seconds. A world dated in the past lost its standing and counter items to that sweep
 * part-way through a run, at random (a ban written, then gone before the check).
 */
export const WORLD_START_MS = Date.UTC(2036, 10, 22, 12);

/** The admin on a fresh fake (the standard plans seeded, the fake's clock) and `local`'s store, as an owner of its own. */
export function controlPlaneWorld(local: AdminDeps, startMs = WORLD_START_MS): World {
  if (startMs < Date.now() + 7 * 86_400_000)
    throw new Error("a world dated before next week meets DynamoDB Local's TTL sweep");
  const fake = new FakeControlPlane(startMs);
  const usagePlans = { free: fake.seedPlan('free'), pro: fake.seedPlan('pro'), business: fake.seedPlan('business') };
  const owner = `cp-${randomUUID()}`;
  const plain: AdminDeps = {
    ...local,
    store: ownStore(local.store, owner),
    stage: STAGE,
    usagePlans,
    now: fake.now,
    revokedKeyGraceMs: GRACE_MS,
    gateway: awsKeyGateway(fake, { apiId: 'api123', stage: 'v1' }, fake),
    // What STS GetCallerIdentity answers on a stage: an assumed role's session, naming the person.
    whoami: async () => STAGE_PRINCIPAL,
  };
  const storage = new StorageFaults();
  const deps = storage.around(plain);
  return { fake, storage, deps, plain, admin: keyAdmin(deps), owner, usagePlans };
}

/**
 * The store as one world's own: the worlds of a test file share DynamoDB Local's tables, and `keys purge` and
 * `keys reconcile --all` read the whole table's backlog, as they should in a stage. Without this, every world would
 * also reconcile the keys earlier worlds left waiting for purge (their API keys in other fakes): each run grows with
 * the runs before it, and the converge test, which runs each command once per possible fault, ran past its timeout.
 * So a world's sweeps see only its owner's records, as a table of its own would hold.
 */
function ownStore(store: AdminDeps['store'], owner: string): AdminDeps['store'] {
  return {
    ...store,
    listDue: async (cutoff) => (await store.listDue(cutoff)).filter((r) => r.owner === owner),
    listPage: (filter, limit, after) => store.listPage({ owner, ...filter }, limit, after),
  };
}

/** The records of the world's owner, on the store its admin writes. */
export const recordsOf = async ({ plain, owner }: World): Promise<KeyRecord[]> =>
  (await plain.store.list()).filter((r) => r.owner === owner);

const BRACKET_MEMBER = new RegExp(`^animal-store-${STAGE}-enterprise-(r\\d+-b\\d+-q\\d+)-m(\\d+)$`);

/** What is wrong at the gateway: anything left behind, missing or misplaced. */
function gatewayProblems(w: World, records: KeyRecord[]): string[] {
  const { fake, usagePlans } = w;
  const found: string[] = [];
  const standard = new Set(Object.values(usagePlans));
  const namedKeys = new Set(records.flatMap((r) => [r.apiGatewayKeyId, r.retiredApiKeyId]).filter(Boolean));
  const namedPlans = new Set(records.flatMap((r) => [r.usagePlanId, r.retiredUsagePlanId]).filter(Boolean));
  const bracketPlans = [...fake.plans.values()].filter((p) => p.name.startsWith(`animal-store-${STAGE}-enterprise-r`));
  const names = bracketPlans.map((p) => p.name);
  if (new Set(names).size !== names.length) found.push(`a bracket's plan made twice: ${names}`);
  for (const k of fake.keys.values()) {
    if (namedKeys.has(k.id)) continue;
    const m = BRACKET_MEMBER.exec(k.name);
    const plan = m && bracketPlans.find((p) => p.name === `animal-store-${STAGE}-enterprise-${m[1]}`);
    if (!m) found.push(`API key ${k.id} (${k.name}) named by no record and in no pool`);
    else if (k.value !== bracketPoolKeyValue(STAGE, m[1]!, Number(m[2])))
      found.push(`pool member ${k.name}: wrong value`);
    else if (fake.plansOf(k.id).join() !== (plan?.id ?? '-'))
      found.push(`pool member ${k.name} is not (only) on its plan`);
  }
  for (const id of fake.plans.keys())
    if (!standard.has(id) && !namedPlans.has(id) && !bracketPlans.some((p) => p.id === id))
      found.push(`usage plan ${id} named by no record`);
  for (const r of records) {
    if (r.apiGatewayKeyId || r.usagePlanId) found.push(`${r.keyId} still names an API key or usage plan of its own`);
    if (r.status !== 'active' || r.plan !== 'enterprise') continue;
    const plan = bracketPlans.find((p) => p.name === bracketPlanName(STAGE, enterpriseBracket(limitsOf(r)!)));
    const t = usagePlanThrottle(limitsOf(r)!);
    if (!plan?.apiStages.length) found.push(`${r.keyId}: its bracket's usage plan is missing or off the stage`);
    else if ((plan.quota?.limit ?? 0) < t.quotaPerDay || (plan.throttle?.rateLimit ?? 0) < t.rateLimit)
      found.push(`${r.keyId}: its bracket's usage plan refuses what its limits admit`);
    else if (plan.keys.size !== BRACKET_POOL.apiKeys)
      found.push(`${r.keyId}: its bracket's pool has ${plan.keys.size} members`);
  }
  return found;
}

/** What is wrong in the limiter's items: a standing or a counts layout the record does not call for. */
async function limiterProblems(w: World, records: KeyRecord[]): Promise<string[]> {
  const { plain } = w;
  const found: string[] = [];
  const now = plain.now!();
  const win = windowsAt(now);
  for (const r of records) {
    if (!converged(r))
      found.push(`${r.keyId}: not reconciled (version ${r.version}, reconciled ${r.reconciledVersion})`);
    if (r.countsShards !== undefined) found.push(`${r.keyId}: today's counts still on ${r.countsShards} shard(s)`);
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

/** Everything wrong between the records and the inventory (API Gateway and the limiter): [] when converged. */
export async function problems(w: World): Promise<string[]> {
  const records = await recordsOf(w);
  return [...gatewayProblems(w, records), ...(await limiterProblems(w, records))];
}
