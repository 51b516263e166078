import { CfnApiKey, CfnUsagePlanKey, UsagePlan, type RestApi, type Stage } from 'aws-cdk-lib/aws-apigateway';
import { Tags, type CfnResource } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import { planKeyLogicalId, planKeyPlanLogicalId, planUsagePlanLogicalId } from './usage-plan-ids.ts';
import { MAX_CUSTOM_LIMITS, PLANS, PLAN_NAMES, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import type { Throttle } from '../config/capacity.ts';

export interface UsagePlansProps {
  readonly api: RestApi;
  /** @default api.deploymentStage */
  readonly stage?: Stage;
  /** Prefix of the plans' display names (not physical ids). @default - the plan's display name alone */
  readonly namePrefix?: string;
  /** The stage name the functions run with (STAGE): the API key values name it, as the authorizer does. */
  readonly stageName: string;
  /** Each plan's token bucket (lib/config/capacity.ts planThrottles). */
  readonly throttles: Readonly<Record<PlanName, Throttle>>;
}

/** What a plan's usage plan says of its keys' own limits, for the console: the plans table's. */
function perKey(plan: PlanName): { text: string; perMinute: string; perDay: string } {
  const limits = PLANS[plan].limits;
  if (!limits)
    return {
      text: `limits agreed per key, up to ${MAX_CUSTOM_LIMITS.perMinute}/min and ${MAX_CUSTOM_LIMITS.perDay}/day`,
      perMinute: 'agreed',
      perDay: 'agreed',
    };
  return {
    text: `${limits.perMinute}/min and ${limits.perDay}/day per key`,
    perMinute: String(limits.perMinute),
    perDay: String(limits.perDay),
  };
}

/**
 * One usage plan per plan, each with one API key (contract/plans.ts planUsageKeyValue), which the authorizer names
 * for every key of the plan. Each key's own limits are the functions' limiter's; the plan's throttle bounds all its
 * keys together (capacity.ts planThrottles). No quota: a spent day is the authorizer's Deny.
 */
export class UsagePlans extends Construct {
  readonly plans: ReadonlyMap<PlanName, UsagePlan>;
  /** The usage plan keys: the authorizer must not name one before it exists. */
  readonly planKeys: readonly CfnUsagePlanKey[];

  constructor(scope: Construct, id: string, props: UsagePlansProps) {
    super(scope, id);
    const stage = props.stage ?? props.api.deploymentStage;
    const plans = new Map<PlanName, UsagePlan>();
    const planKeys: CfnUsagePlanKey[] = [];
    for (const name of PLAN_NAMES) {
      const plan = PLANS[name];
      const t = props.throttles[name];
      const own = perKey(name);
      const usagePlan = new UsagePlan(this, name, {
        name: props.namePrefix ? `${props.namePrefix}-${plan.displayName}` : plan.displayName,
        description: `${plan.displayName}: ${own.text} (the functions' limiter); all ${plan.displayName} keys together ${t.rateLimit} req/s, ${t.burstLimit} at once`,
        throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
        apiStages: [{ api: props.api, stage }],
      });
      // Pinned: a display-name change must not replace the plan, which would detach its API key (403 for its keys).
      pinLogicalId(usagePlan, planUsagePlanLogicalId(name));
      Tags.of(usagePlan).add('animal-store:plan', name);
      Tags.of(usagePlan).add('animal-store:per-key-per-minute', own.perMinute);
      Tags.of(usagePlan).add('animal-store:per-key-per-day', own.perDay);
      plans.set(name, usagePlan);

      const keyId = planKeyLogicalId(name);
      const key = new CfnApiKey(this, keyId, {
        name: `${props.stageName}-${keyId}`,
        value: planUsageKeyValue(props.stageName, name),
        enabled: true,
      });
      pinLogicalId(key, keyId);
      const planKey = new CfnUsagePlanKey(this, planKeyPlanLogicalId(name), {
        usagePlanId: usagePlan.usagePlanId,
        keyId: key.ref,
        keyType: 'API_KEY',
      });
      pinLogicalId(planKey, planKeyPlanLogicalId(name));
      planKeys.push(planKey);
    }
    this.plans = plans;
    this.planKeys = planKeys;

    // One usage plan change at a time: API Gateway allows one UpdateUsagePlan request every 20 s per account, and
    // concurrent CreateUsagePlanKey calls fail with "concurrent modification"; CloudFormation runs independent
    // resources in parallel, so a DependsOn chain orders the plans' and the plan keys' creates, updates and deletes.
    const chain = [...plans.values()].map((p) => p.node.defaultChild as CfnResource);
    for (let i = 1; i < chain.length; i++) chain[i]!.addResourceDependency(chain[i - 1]!);
    for (let i = 1; i < planKeys.length; i++) planKeys[i]!.addResourceDependency(planKeys[i - 1]!);
  }
}
