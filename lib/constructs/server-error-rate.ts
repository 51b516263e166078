import type { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';

/** Where the functions' custom metrics live (lambdas/shared/observability.ts). */
export interface CustomMetrics {
  /** The functions' METRICS_NAMESPACE. */
  readonly namespace: string;
  /**
   * The functions' default dimensions, exactly: `service` (SERVICE_NAME) and `stage` (STAGE).
   * The functions publish every counted metric under this set alone (lambdas/shared/observability.ts).
   */
  readonly dimensions: Readonly<Record<string, string>>;
}

/** A custom metric of the functions, summed over `period`, under their default dimension set. */
export function customMetric(custom: CustomMetrics, metricName: string, period: Duration): Metric {
  return new Metric({
    namespace: custom.namespace,
    metricName,
    dimensionsMap: { ...custom.dimensions },
    period,
    statistic: 'Sum',
  });
}

/**
 * The API's 5xx responses as a percentage of its requests, without the 501s of operations the spec lists but does
 * not specify yet: those are the contract's answer, not a failure of ours, and must neither page anyone nor roll a
 * deploy back. API Gateway's 5XXError counts them, so the envelope counts each as `NotImplemented` and the rate
 * subtracts it (both filled with 0: a period without a 501 has no data point, and a difference with an empty series is empty).
 * A period without requests has no rate: 0, not a division by zero (a dropped data point). CloudWatch checks metric
 * math only when the alarm is created; test/infra/metric-math.ts checks it at synth.
 */
export function serverErrorRate(api: RestApi, custom: CustomMetrics, period: Duration): MathExpression {
  return new MathExpression({
    expression: 'IF(requests > 0, 100 * (FILL(errors, 0) - FILL(unimplemented, 0)) / requests, 0)',
    usingMetrics: {
      errors: api.metricServerError({ period, statistic: 'Sum' }),
      requests: api.metricCount({ period, statistic: 'Sum' }),
      unimplemented: customMetric(custom, 'NotImplemented', period),
    },
    period,
  });
}
