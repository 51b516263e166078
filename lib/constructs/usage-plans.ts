import { CfnApiKey, CfnUsagePlanKey, Period, UsagePlan, type RestApi, type Stage } from 'aws-cdk-lib/aws-apigateway';
import type { CfnResource } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import {
  POOL_PLAN_LOGICAL_ID,
  SPENT_KEY_LOGICAL_ID,
  SPENT_KEY_PLAN_LOGICAL_ID,
  SPENT_PLAN_LOGICAL_ID,
  payingPoolMemberLogicalId,
  payingPoolPlanLogicalId,
  payingProbationLogicalId,
  poolMemberLogicalId,
  probationKeyLogicalId,
  standardPlanLogicalId,
} from './usage-plan-ids.ts';
import { PLANS, STANDARD_PLANS, usagePlanThrottle, type PlanName } from '../../contract/plans.ts';
import {
  FREE_KEY_POOL,
  PAYING_POOLS,
  SPENT_KEYS,
  payingPoolKeyValue,
  poolKeyValue,
  poolThrottle,
  spentKeyValue,
  type PayingPoolPlan,
} from '../../contract/key-pool.ts';
import { PAYING_PROBATION, PROBATION, payingProbationKeyValue, probationKeyValue } from '../../contract/probation.ts';

export interface UsagePlansProps {
  readonly api: RestApi;
  /** @default api.deploymentStage */
  readonly stage?: Stage;
  /** Prefix of the plans' display names (not physical ids). @default - the plan's display name alone */
  readonly namePrefix?: string;
  /** The stage name the functions run with (STAGE): the pool's API key values name it, as the authorizer does. */
  readonly stageName: string;
}

/**
 * One usage plan per standard plan (Free, Pro, Business) from the plans table, via usagePlanThrottle: the
 * best-effort backstop behind the app limiter, sized so that it never rejects what the app admits from a client
 * that honours the headers (docs/deployment.md). Enterprise brackets' plans and pools are made by the admin tool.
 * Also the pools of API keys every Free, Pro and Business key shares (contract/key-pool.ts): each pool's usage plan
 * and its members' API keys, and its probation keys (contract/probation.ts); and the spent-keys plan, where the
 * authorizer counts a key whose day quota is spent.
 */
export class UsagePlans extends Construct {
  readonly plans: ReadonlyMap<PlanName, UsagePlan>;
  /** The usage plan of the Free key pool (contract/key-pool.ts), with its members' API keys. */
  readonly freePool: UsagePlan;
  /** The usage plans of the paying plans' pools. */
  readonly payingPools: ReadonlyMap<PayingPoolPlan, UsagePlan>;
  /** The usage plan keys whose day quota is spent are counted against: its quota is always spent. */
  readonly spent: UsagePlan;

  constructor(scope: Construct, id: string, props: UsagePlansProps) {
    super(scope, id);
    const stage = props.stage ?? props.api.deploymentStage;
    const plans = new Map<PlanName, UsagePlan>();
    for (const name of STANDARD_PLANS) {
      const plan = PLANS[name];
      const t = usagePlanThrottle(plan.limits!);
      if (!t.guaranteed)
        throw new Error(
          `Usage plan ${plan.displayName} exceeds the account-level throttle (ACCOUNT_THROTTLE): it would reject what the app admits`,
        );
      // Keyed by the plan's stable name, pinned: a display-name change must not replace the plan, which would detach
      // every API key in it (403 for all its callers).
      const usagePlan = new UsagePlan(this, name, {
        name: props.namePrefix ? `${props.namePrefix}-${plan.displayName}` : plan.displayName,
        description: `${plan.displayName}: ${plan.limits!.perMinute}/min, ${plan.limits!.perDay}/day (app limiter); gateway backstop above them`,
        throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
        quota: { limit: t.quotaPerDay, period: Period.DAY },
        apiStages: [{ api: props.api, stage }],
      });
      pinLogicalId(usagePlan, standardPlanLogicalId(name));
      plans.set(name, usagePlan);
    }
    this.plans = plans;

    // Free keys share these API keys (one of the account's 10,000 each, however many Free customers): the authorizer
    // names the member a key id maps to. Logical ids are the member numbers, so growing the pool adds keys and never
    // replaces one that cached authorizer results name.
    const t = poolThrottle();
    if (!t.guaranteed)
      throw new Error('The Free key pool usage plan exceeds the account-level throttle (ACCOUNT_THROTTLE)');
    const poolName = props.namePrefix ? `${props.namePrefix}-${FREE_KEY_POOL.displayName}` : FREE_KEY_POOL.displayName;
    this.freePool = new UsagePlan(this, POOL_PLAN_LOGICAL_ID, {
      name: poolName,
      description: `Free key pool: each of ${FREE_KEY_POOL.members} API keys carries many Free customers; each admits what the account admits (the limiter enforces each customer's plan)`,
      throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
      quota: { limit: t.quotaPerDay, period: Period.DAY },
      apiStages: [{ api: props.api, stage }],
    });
    pinLogicalId(this.freePool, POOL_PLAN_LOGICAL_ID);
    // One at a time: CreateApiKey is limited to 5 calls/s per account and concurrent CreateUsagePlanKey calls on one
    // plan fail with "concurrent modification", so each key and each plan key waits for the one before it (a first
    // deploy creates them in a few minutes; a rollback deletes them in the same order). Ids are pinned to the member
    // number, and the names carry no stack name: a replacement would need a second key with the same (unique) value.
    let previous: Chained | undefined;
    for (let member = 0; member < FREE_KEY_POOL.members; member++)
      previous = this.member(
        poolMemberLogicalId(member),
        poolKeyValue(props.stageName, member),
        this.freePool,
        previous,
        props,
      );

    // The paying plans' pools, the same way, on usage plans of the same figures (MEMBER_PLAN).
    const payingPools = new Map<PayingPoolPlan, UsagePlan>();
    for (const [plan, pool] of Object.entries(PAYING_POOLS) as Array<
      [PayingPoolPlan, (typeof PAYING_POOLS)[PayingPoolPlan]]
    >) {
      const pt = poolThrottle(plan);
      const usagePlan = new UsagePlan(this, payingPoolPlanLogicalId(pool.logicalPrefix), {
        name: props.namePrefix ? `${props.namePrefix}-${pool.displayName}` : pool.displayName,
        description: `${PLANS[plan].displayName} key pool: ${pool.members} API keys shared by every ${PLANS[plan].displayName} key`,
        throttle: { rateLimit: pt.rateLimit, burstLimit: pt.burstLimit },
        quota: { limit: pt.quotaPerDay, period: Period.DAY },
        apiStages: [{ api: props.api, stage }],
      });
      pinLogicalId(usagePlan, payingPoolPlanLogicalId(pool.logicalPrefix));
      payingPools.set(plan, usagePlan);
      for (let member = 0; member < pool.members; member++)
        previous = this.member(
          payingPoolMemberLogicalId(pool.logicalPrefix, member),
          payingPoolKeyValue(props.stageName, plan, member),
          usagePlan,
          previous,
          props,
        );
    }
    this.payingPools = payingPools;

    // A key whose day quota is spent is counted here (the authorizer names this API key), not against its pool member
    // or its own key: the quota of SPENT_KEYS.quotaPerDay is spent by the day's first such request, so API Gateway
    // answers the rest QUOTA_EXCEEDED itself (429 quota_exceeded), before a function runs. No throttle of its own:
    // every spent key shares it, and a throttle would answer them `rate_limited`, which they are not.
    const spentName = props.namePrefix ? `${props.namePrefix}-${SPENT_KEYS.displayName}` : SPENT_KEYS.displayName;
    this.spent = new UsagePlan(this, SPENT_PLAN_LOGICAL_ID, {
      name: spentName,
      description: 'Keys whose day quota is spent: refused at the gateway until the day ends',
      quota: { limit: SPENT_KEYS.quotaPerDay, period: Period.DAY },
      apiStages: [{ api: props.api, stage }],
    });
    pinLogicalId(this.spent, SPENT_PLAN_LOGICAL_ID);
    const spentKey = new CfnApiKey(this, SPENT_KEY_LOGICAL_ID, {
      name: `${props.stageName}-${SPENT_KEY_LOGICAL_ID}`,
      value: spentKeyValue(props.stageName),
      enabled: true,
    });
    pinLogicalId(spentKey, SPENT_KEY_LOGICAL_ID);
    const spentPlanKey = new CfnUsagePlanKey(this, SPENT_KEY_PLAN_LOGICAL_ID, {
      usagePlanId: this.spent.usagePlanId,
      keyId: spentKey.ref,
      keyType: 'API_KEY',
    });
    pinLogicalId(spentPlanKey, SPENT_KEY_PLAN_LOGICAL_ID);
    // After the pool's last key: CreateApiKey's 5 calls/s and one plan-key change at a time per account.
    if (previous) {
      spentKey.addResourceDependency(previous.key);
      spentPlanKey.addResourceDependency(previous.planKey);
    }

    // Keys whose ban ended in the last day are counted here, each on its plan's probation shard (contract/
    // probation.ts), on its own pool's usage plan (a member's bucket and quota, sized for that plan's customers), not
    // on the member it shares with customers in good standing. After the spent key, one after another, for the same
    // reasons. Free's ids and values are those of the Free-only probation keys before, so deployed keys stay.
    let after: Chained = { key: spentKey, planKey: spentPlanKey };
    for (let shard = 0; shard < PROBATION.shards; shard++)
      after = this.member(
        probationKeyLogicalId(shard),
        probationKeyValue(props.stageName, shard),
        this.freePool,
        after,
        props,
      );
    for (const [plan, usagePlan] of payingPools)
      for (let shard = 0; shard < PAYING_PROBATION.shards; shard++)
        after = this.member(
          payingProbationLogicalId(PAYING_POOLS[plan].logicalPrefix, shard),
          payingProbationKeyValue(props.stageName, plan, shard),
          usagePlan,
          after,
          props,
        );

    // One usage plan at a time: API Gateway allows one UpdateUsagePlan request every 20 s per account, and
    // CloudFormation updates resources that do not depend on each other in parallel, so a change of a plan's figures
    // (Free's quota moves the Free plan and the pool's) would send two at once and roll back on
    // TooManyRequestsException. A DependsOn chain over every plan of the stack orders their creates, updates and
    // deletes, however many a change touches.
    const chain = [...plans.values(), this.freePool, ...payingPools.values(), this.spent].map(
      (p) => p.node.defaultChild as CfnResource,
    );
    for (let i = 1; i < chain.length; i++) chain[i]!.addResourceDependency(chain[i - 1]!);
  }

  /** One pool member: its API key and its usage plan key, after the member before it. */
  private member(id: string, value: string, plan: UsagePlan, previous: Chained | undefined, props: UsagePlansProps) {
    const key = new CfnApiKey(this, id, { name: `${props.stageName}-${id}`, value, enabled: true });
    const planKey = new CfnUsagePlanKey(this, `${id}Plan`, {
      usagePlanId: plan.usagePlanId,
      keyId: key.ref,
      keyType: 'API_KEY',
    });
    pinLogicalId(key, id);
    pinLogicalId(planKey, `${id}Plan`);
    if (previous) {
      key.addResourceDependency(previous.key);
      planKey.addResourceDependency(previous.planKey);
    }
    return { key, planKey };
  }
}

interface Chained {
  readonly key: CfnApiKey;
  readonly planKey: CfnUsagePlanKey;
}
