/**
 * API Gateway's own 429s, counted apart from the functions'. A usage plan's throttle (THROTTLED) or day quota
 * (QUOTA_EXCEEDED), and the stage's or the account's throttle (THROTTLED), answer before any function runs, so no
 * function metric counts them: the gateway's 4XXError mixes them with every other 4xx, and the functions'
 * RateLimited only counts the limiter's. The access log names each refusal's gateway response type and API key, so
 * metric filters on it count them, by cause. The authorizer's Denies (ACCESS_DENIED: a banned key, a spent day) are
 * the limiter's decisions enforced at the gateway, counted in a metric of their own, never as the gateway refusing
 * customers.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern, MetricFilter, type ILogGroup, type JsonPattern } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ACCESS_LOG_FIELDS } from './api-edge.ts';
import { linkAlarmRunbooks } from './alarm-runbook.ts';
import { customMetric, type CustomMetrics } from './server-error-rate.ts';

/**
 * Gateway refusals of customers' keys in 5 minutes that page. The usage plans and the stage throttle are sized never
 * to refuse a client that honours the headers, so the normal count is 0, but API Gateway applies throttles and quotas
 * on a best-effort basis: a stray refusal at a bucket's edge is not an incident. A hop short of what the contract
 * promises refuses far more: the smallest contract, Free's 60 a minute, makes 10 refusals in the first 10 seconds a
 * customer at its contract rate is refused, and 300 in the 5 minutes. So 10 is past noise and well inside any real
 * shortfall, even one that hits a single Free customer.
 */
export const GATEWAY_REFUSING_CUSTOMERS_THRESHOLD = 10;

/** The metrics the access log's metric filters publish (in the functions' namespace, under their dimension set). */
export const GATEWAY_REFUSAL_METRICS = {
  /** THROTTLED: a plan's usage plan bucket, the stage's throttle or the account's. */
  throttled: 'GatewayThrottled',
  /** QUOTA_EXCEEDED: a usage plan's quota (none has one: never expected). */
  quotaExceeded: 'GatewayQuotaExceeded',
  /** ACCESS_DENIED: the authorizer's Deny of a banned key or a spent day (intended). */
  denied: 'GatewayDenied',
} as const;

const PERIOD = Duration.minutes(5);

/** The access-log field that carries a `$context` variable (api-edge.ts ACCESS_LOG_FIELDS): read, never restated. */
function fieldOf(variable: string): string {
  const field = Object.entries(ACCESS_LOG_FIELDS).find(([, v]) => v === variable)?.[0];
  if (!field) throw new Error(`the access log has no field for ${variable}`);
  return `$.${field}`;
}
const RESPONSE_TYPE = fieldOf('$context.error.responseType');
export interface GatewayRefusalsProps {
  /** The API's access log group; its lines must carry the custom metrics' dimensions as fields (accessLogFormat). */
  readonly accessLogs: ILogGroup;
  /** The functions' namespace and exact dimension set, which these metrics share. */
  readonly customMetrics: CustomMetrics;
}

/** A series the dashboard graphs: a metric name and what its line says. */
export interface GatewayRefusalSeries {
  readonly metricName: string;
  readonly label: string;
}

/**
 * Metric filters on the access log counting API Gateway's own 429s (THROTTLED and QUOTA_EXCEEDED of customers'
 * keys, and the authorizer's Denies apart), and one alarm: the gateway refusing customers, which means a hop (a usage
 * plan, the stage throttle, the account's throttle) is at capacity.
 */
export class GatewayRefusals extends Construct {
  /** The series for the dashboard, customers' first. */
  readonly series: readonly GatewayRefusalSeries[] = [
    { metricName: GATEWAY_REFUSAL_METRICS.throttled, label: 'THROTTLED (usage plan, stage or account)' },
    { metricName: GATEWAY_REFUSAL_METRICS.quotaExceeded, label: 'QUOTA_EXCEEDED (usage plan day quota)' },
    { metricName: GATEWAY_REFUSAL_METRICS.denied, label: 'banned or spent keys (intended)' },
  ];
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: GatewayRefusalsProps) {
    super(scope, id);
    linkAlarmRunbooks(this);
    const { namespace, dimensions } = props.customMetrics;
    // The dimensions are taken from the line's own fields of the same names, and the pattern requires their values:
    // a line without them (a format without the constants) counts nowhere rather than under another dimension set.
    const labels = Object.entries(dimensions).map(([k, v]) => FilterPattern.stringValue(`$.${k}`, '=', v));
    const ofType = (type: string) => FilterPattern.stringValue(RESPONSE_TYPE, '=', type);
    const filter = (filterId: string, metricName: string, pattern: JsonPattern) =>
      new MetricFilter(this, filterId, {
        logGroup: props.accessLogs,
        filterPattern: FilterPattern.all(pattern, ...labels),
        metricNamespace: namespace,
        metricName,
        metricValue: '1',
        // No default value: CloudWatch Logs allows none with dimensions; the alarm fills the gaps.
        dimensions: Object.fromEntries(Object.keys(dimensions).map((k) => [k, `$.${k}`])),
      });
    filter('Throttled', GATEWAY_REFUSAL_METRICS.throttled, ofType('THROTTLED'));
    filter('QuotaExceeded', GATEWAY_REFUSAL_METRICS.quotaExceeded, ofType('QUOTA_EXCEEDED'));
    filter('Denied', GATEWAY_REFUSAL_METRICS.denied, ofType('ACCESS_DENIED'));

    const metric = (name: string): Metric => customMetric(props.customMetrics, name, PERIOD);
    const threshold = GATEWAY_REFUSING_CUSTOMERS_THRESHOLD;
    this.alarm = new Alarm(this, 'RefusingCustomers', {
      alarmDescription: `API Gateway 429s to customers' keys (THROTTLED, QUOTA_EXCEEDED; the authorizer's Denies aside) >= ${threshold} over 5 minutes`,
      // Each series has data only in a period with a refusal: a sum needs FILL on each, or one cause alone is empty.
      metric: new MathExpression({
        expression: 'FILL(throttled, 0) + FILL(quotaExceeded, 0)',
        usingMetrics: {
          throttled: metric(GATEWAY_REFUSAL_METRICS.throttled),
          quotaExceeded: metric(GATEWAY_REFUSAL_METRICS.quotaExceeded),
        },
        period: PERIOD,
      }),
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
