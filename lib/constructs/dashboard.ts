import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  type IAlarm,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

/** The functions' custom metrics: their namespace and the default dimensions every one of them carries. */
export interface CustomMetrics {
  readonly namespace: string;
  /** The functions' `service` (SERVICE_NAME) and STAGE (lambdas/shared/observability.ts). */
  readonly dimensions: Readonly<Record<string, string>>;
}

export interface OperationsDashboardProps {
  readonly api: RestApi;
  /** Operation functions by operationId. */
  readonly operations: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  /** Tables by their definition id. */
  readonly tables: ReadonlyMap<string, ITable>;
  /** Shown in one alarm status widget. */
  readonly alarms: readonly IAlarm[];
  readonly customMetrics: CustomMetrics;
  /** The 429 error codes the limiter counts (RateLimited by `code`). */
  readonly rateLimitCodes: readonly string[];
  /** The plan names (RateLimited by `plan`). */
  readonly plans: readonly string[];
  /** Deprecated operations: their DeprecatedOperationCall count. */
  readonly deprecated: readonly {
    readonly operationId: string;
    readonly method: string;
    readonly path: string;
    readonly sunsetAt: string;
  }[];
  /** @default - generated */
  readonly dashboardName?: string;
  /** Web ACLs whose blocked requests are graphed. @default - every web ACL of the stack (built before this) */
  readonly webAcls?: readonly CfnWebACL[];
  /**
   * API Gateway's own 429s by cause (gateway-refusals.ts), custom metrics under the same dimension set, graphed
   * beside the functions' 429s. @default - not graphed
   */
  readonly gatewayRefusals?: readonly { readonly metricName: string; readonly label: string }[];
}

const PERIOD = Duration.minutes(1);
const WIDE = 12;
const HIGH = 6;

/**
 * The stage's CloudWatch dashboard: API traffic, per-operation requests and latency, 429s by reason and by plan
 * beside the gateway's own 429s by cause, authorizer denials vs failures, DynamoDB capacity and throttles per table,
 * calls to deprecated operations (and who makes them), and the state of every alarm. Custom metrics use exactly the
 * dimension sets the functions emit: CloudWatch matches a metric by its full dimension set, so a widget on any other
 * set stays empty.
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const { api } = props;
    const custom = (metricName: string, breakdown: Record<string, string> = {}, label?: string): Metric =>
      new Metric({
        namespace: props.customMetrics.namespace,
        metricName,
        dimensionsMap: { ...props.customMetrics.dimensions, ...breakdown },
        statistic: 'Sum',
        period: PERIOD,
        label: label ?? metricName,
      });
    const perOperation = (make: (fn: IFunction) => IMetric, label: string) =>
      [...props.operations].map(([name, fn]) => withLabel(make(fn), `${name} ${label}`));
    const graph = (title: string, left: IMetric[], right: IMetric[] = [], width = WIDE) =>
      new GraphWidget({ title, left, right, width, height: HIGH, period: PERIOD });

    const d = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });
    d.addWidgets(
      graph('API requests, 4xx and 5xx', [
        api.metricCount({ statistic: 'Sum', period: PERIOD, label: 'requests' }),
        api.metricClientError({ statistic: 'Sum', period: PERIOD, label: '4xx' }),
        api.metricServerError({ statistic: 'Sum', period: PERIOD, label: '5xx' }),
      ]),
      graph('API latency (p50, p99, ms)', [
        api.metricLatency({ statistic: 'p50', period: PERIOD, label: 'p50' }),
        api.metricLatency({ statistic: 'p99', period: PERIOD, label: 'p99' }),
        api.metricIntegrationLatency({ statistic: 'p99', period: PERIOD, label: 'integration p99' }),
      ]),
    );
    d.addWidgets(
      graph(
        'Requests per operation (invocations)',
        perOperation((fn) => fn.metricInvocations({ statistic: 'Sum', period: PERIOD }), 'invocations'),
      ),
      graph('Errors and throttles per operation (Lambda)', [
        ...perOperation((fn) => fn.metricErrors({ statistic: 'Sum', period: PERIOD }), 'errors'),
        ...perOperation((fn) => fn.metricThrottles({ statistic: 'Sum', period: PERIOD }), 'throttles'),
      ]),
    );
    d.addWidgets(
      graph(
        'Latency per operation p50 (ms)',
        perOperation((fn) => fn.metricDuration({ statistic: 'p50', period: PERIOD }), 'p50'),
      ),
      graph(
        'Latency per operation p99 (ms)',
        perOperation((fn) => fn.metricDuration({ statistic: 'p99', period: PERIOD }), 'p99'),
      ),
    );
    // The gateway's own 429s never reach a function: side by side with the limiter's, a row tells who refused.
    const gateway = props.gatewayRefusals ?? [];
    const third = gateway.length ? 8 : WIDE;
    d.addWidgets(
      graph(
        '429 by reason',
        props.rateLimitCodes.map((code) => custom('RateLimited', { code }, code)),
        [],
        third,
      ),
      ...(gateway.length
        ? [
            graph(
              'Gateway 429s by cause (no function ran)',
              gateway.map((g) => custom(g.metricName, {}, g.label)),
              [],
              third,
            ),
          ]
        : []),
      graph(
        '429 by plan',
        props.plans.map((plan) => custom('RateLimited', { plan }, plan)),
        [],
        third,
      ),
    );
    d.addWidgets(
      graph(
        'Authorizer: denials (401) vs failures (503)',
        [
          custom('AuthorizerDenied', {}, 'denied (unknown, revoked key)'),
          custom('AuthorizerFailure', {}, 'failed (key lookup)'),
        ],
        [props.authorizer.metricInvocations({ statistic: 'Sum', period: PERIOD, label: 'invocations (cache misses)' })],
      ),
      graph(
        'Deprecated operations: calls',
        props.deprecated.map((op) =>
          custom(
            'DeprecatedOperationCall',
            { operation: op.operationId },
            `${op.operationId} (sunset ${op.sunsetAt.slice(0, 10)})`,
          ),
        ),
      ),
    );
    const tables = [...props.tables];
    d.addWidgets(
      graph(
        'DynamoDB consumed capacity per table',
        tables.flatMap(([name, t]) => [
          withLabel(t.metricConsumedReadCapacityUnits({ statistic: 'Sum', period: PERIOD }), `${name} read`),
          withLabel(t.metricConsumedWriteCapacityUnits({ statistic: 'Sum', period: PERIOD }), `${name} write`),
        ]),
      ),
      graph(
        'DynamoDB throttles per table',
        tables.flatMap(([name, t]) => [
          withLabel(t.metric('ReadThrottleEvents', { statistic: 'Sum', period: PERIOD }), `${name} read`),
          withLabel(t.metric('WriteThrottleEvents', { statistic: 'Sum', period: PERIOD }), `${name} write`),
        ]),
      ),
    );
    const acls =
      props.webAcls ??
      Stack.of(this)
        .node.findAll()
        .filter((c): c is CfnWebACL => c instanceof CfnWebACL);
    if (acls.length)
      d.addWidgets(
        graph(
          'WAF: requests blocked per rule',
          acls.flatMap((acl) => wafBlocked(acl)),
        ),
      );
    // No Logs Insights widget: it would rescan the access log (billed per GB) on every refresh of the dashboard.
    // Who still calls a deprecated operation is a query run on demand (docs/deployment.md, "Dashboard").
    d.addWidgets(
      new AlarmStatusWidget({
        title: 'Alarms',
        alarms: [...props.alarms],
        width: 24,
        height: Math.max(3, Math.ceil(props.alarms.length / 4) + 1),
      }),
    );
    this.dashboard = d;
  }
}

/**
 * `AWS/WAFV2` `BlockedRequests` of each rule of a web ACL that blocks. WAF publishes rule metrics under the
 * dimensions Region, Rule and WebACL, whose values are the metric names of the rule's and the web ACL's visibility
 * configs (VisibilityConfig.MetricName: "a name of the Amazon CloudWatch metric dimension").
 */
function wafBlocked(acl: CfnWebACL): IMetric[] {
  const aclMetric = (acl.visibilityConfig as CfnWebACL.VisibilityConfigProperty).metricName;
  const rules = (acl.rules ?? []) as CfnWebACL.RuleProperty[];
  return rules
    .filter((r) => (r.action as CfnWebACL.RuleActionProperty | undefined)?.block)
    .map(
      (r) =>
        new Metric({
          namespace: 'AWS/WAFV2',
          metricName: 'BlockedRequests',
          dimensionsMap: {
            Region: Stack.of(acl).region,
            Rule: (r.visibilityConfig as CfnWebACL.VisibilityConfigProperty).metricName,
            WebACL: aclMetric,
          },
          statistic: 'Sum',
          period: PERIOD,
          label: `${r.name} blocked`,
        }),
    );
}

const withLabel = (m: IMetric, label: string): IMetric =>
  m instanceof Metric ? m.with({ label }) : m instanceof MathExpression ? m.with({ label }) : m;
