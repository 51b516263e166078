import { Period, UsagePlan, type RestApi, type Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
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
 * best-effort backstop behind the app limiter. Enterprise plans are per customer, created by the admin tool.
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
      plans.set(
        name,
        new UsagePlan(this, plan.displayName, {
          name: props.namePrefix ? `${props.namePrefix}-${plan.displayName}` : plan.displayName,
          description: `${plan.displayName}: ${plan.limits!.perMinute}/min, ${plan.limits!.perDay}/day (app limiter); gateway backstop`,
          throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
          quota: { limit: t.quotaPerDay, period: Period.DAY },
          apiStages: [{ api: props.api, stage }],
        }),
      );
    }
    this.plans = plans;
  }
}
