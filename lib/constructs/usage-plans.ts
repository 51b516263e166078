import { Period, UsagePlan, type RestApi, type Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import { PLANS, STANDARD_PLANS, usagePlanThrottle, type PlanName } from '../../contract/plans.ts';

export interface UsagePlansProps {
  readonly api: RestApi;
  /** @default api.deploymentStage */
  readonly stage?: Stage;
  /** Prefix of the plans' display names (not physical ids). @default - the plan's display name alone */
  readonly namePrefix?: string;
}

/**
 * One usage plan per standard plan (Free, Pro, Business) from the plans table, via usagePlanThrottle: the
 * best-effort backstop behind the app limiter, sized so that it never rejects what the app admits from a client
 * that honours the headers (docs/deployment.md). Enterprise plans are per customer, created by the admin tool.
 */
export class UsagePlans extends Construct {
  readonly plans: ReadonlyMap<PlanName, UsagePlan>;

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
      pinLogicalId(usagePlan, `UsagePlan${name[0]!.toUpperCase()}${name.slice(1)}`);
      plans.set(name, usagePlan);
    }
    this.plans = plans;
  }
}
