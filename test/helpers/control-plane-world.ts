/**
 * The admin tool on a fresh fake of API Gateway's control plane (control-plane-fake.ts) and the test's records on
 * DynamoDB Local, for one run of an admin command, and the inventory check made after every run: what is wrong
 * between the records and the fake's keys and usage plans.
 */
import { randomUUID } from 'node:crypto';
import { usagePlanThrottle, type PlanName } from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { bracketPlanName, enterpriseBracket } from '../../lib/admin/brackets.ts';
import { awsKeyGateway } from '../../lib/admin/gateway.ts';
import { keyAdmin, type AdminDeps, type KeyAdmin } from '../../lib/admin/service.ts';
import { FakeControlPlane } from './control-plane-fake.ts';

export interface World {
  fake: FakeControlPlane;
  deps: AdminDeps;
  admin: KeyAdmin;
  owner: string;
  usagePlans: Record<Exclude<PlanName, 'enterprise'>, string>;
}

/** The admin on a fresh fake (the standard plans seeded, the fake's clock) and `local`'s store, as an owner of its own. */
export function controlPlaneWorld(local: AdminDeps): World {
  const fake = new FakeControlPlane(Date.UTC(2026, 10, 22, 12));
  const usagePlans = { free: fake.seedPlan('free'), pro: fake.seedPlan('pro'), business: fake.seedPlan('business') };
  const deps: AdminDeps = {
    ...local,
    stage: 'staging',
    usagePlans,
    now: fake.now,
    revokedKeyGraceMs: 120_000,
    gateway: awsKeyGateway(fake, { apiId: 'api123', stage: 'v1' }, fake),
  };
  return { fake, deps, admin: keyAdmin(deps), owner: `cp-${randomUUID()}`, usagePlans };
}

/** The records of the world's owner, on the store its admin writes. */
export const recordsOf = async ({ deps, owner }: World): Promise<KeyRecord[]> =>
  (await deps.store.list()).filter((r) => r.owner === owner);

/** What is wrong between the records and the fake's inventory: anything left behind, missing or misplaced. */
export async function problems(w: World): Promise<string[]> {
  const { fake, usagePlans } = w;
  const records = await recordsOf(w);
  const found: string[] = [];
  const standard = new Set(Object.values(usagePlans));
  const namedKeys = new Set(records.map((r) => r.apiGatewayKeyId).filter(Boolean));
  const namedPlans = new Set(records.flatMap((r) => [r.usagePlanId, r.retiredUsagePlanId]).filter(Boolean));
  for (const id of fake.keys.keys()) if (!namedKeys.has(id)) found.push(`API key ${id} named by no record`);
  const bracketPlans = [...fake.plans.values()].filter((p) => p.name.startsWith('animal-store-staging-enterprise-r'));
  const names = bracketPlans.map((p) => p.name);
  if (new Set(names).size !== names.length) found.push(`a bracket's plan made twice: ${names}`);
  for (const id of fake.plans.keys())
    if (!standard.has(id) && !namedPlans.has(id) && !bracketPlans.some((p) => p.id === id))
      found.push(`usage plan ${id} named by no record`);
  for (const r of records) {
    if (r.status !== 'active') continue;
    const bracket = r.plan === 'enterprise' ? enterpriseBracket(limitsOf(r)!) : undefined;
    const plan =
      r.usagePlanId ??
      (bracket
        ? bracketPlans.find((p) => p.name === bracketPlanName('staging', bracket))?.id
        : usagePlans[r.plan as keyof typeof usagePlans]);
    if (r.apiGatewayKeyId) {
      if (!fake.keys.has(r.apiGatewayKeyId)) found.push(`${r.keyId}: its API key is gone`);
      const on = fake.plansOf(r.apiGatewayKeyId);
      if (on.length !== 1 || on[0] !== plan) found.push(`${r.keyId} (${r.plan}) is on [${on}], not ${plan}`);
    } else if (r.plan !== 'free') found.push(`${r.keyId} (${r.plan}) has no API key`);
    if (r.plan === 'enterprise') {
      const on = fake.plans.get(plan ?? '');
      const t = usagePlanThrottle(limitsOf(r)!);
      if (!on?.apiStages.length) found.push(`${r.keyId}: its usage plan is missing or off the stage`);
      else if ((on.quota?.limit ?? 0) < t.quotaPerDay || (on.throttle?.rateLimit ?? 0) < t.rateLimit)
        found.push(`${r.keyId}: its usage plan refuses what its limits admit`);
    }
  }
  return found;
}
