import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  TreatMissingData,
  type IAlarmAction,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable, Operation } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { AUTHORIZER } from '../../contract/routes.ts';
import type { AlarmThresholds } from '../config/stages.ts';
import { DYNAMODB_OPERATIONS } from '../../contract/tables.ts';
import { linkAlarmRunbooks } from './alarm-runbook.ts';
import { customMetric, serverErrorRate, type CustomMetrics } from './server-error-rate.ts';

export type { CustomMetrics } from './server-error-rate.ts';

export interface ApiAlarmsProps {
  readonly api: RestApi;
  /** Functions by a readable name (operationId, and AUTHORIZER.name for the authorizer). */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Tables by their definition id. */
  readonly tables: ReadonlyMap<string, ITable>;
  /**
   * The DynamoDB operations the functions perform on each table (by definition id): the per-table alarms watch
   * these. Each is a billed alarm metric, so only what can happen is watched. @default TABLE_OPERATIONS for each
   */
  readonly tableOperations?: ReadonlyMap<string, readonly Operation[]>;
  readonly thresholds: AlarmThresholds;
  /** Where the functions' custom metrics live (namespace and exact dimension set). */
  readonly customMetrics: CustomMetrics;
  /** @default - no action */
  readonly action?: IAlarmAction;
}

const PERIOD = Duration.minutes(5);
/**
 * Every DynamoDB operation the service performs (CDK's Operation values are DynamoDB's operation names). A table's
 * alarms watch the subset its functions may perform (`tableOperations`); an alarm's math may use at most 10 metrics.
 */
export const TABLE_OPERATIONS = DYNAMODB_OPERATIONS as readonly string[] as readonly Operation[];

/**
 * CloudWatch alarms: API 5xx rate, API p99 latency, Lambda errors (handlers) and throttles per function, DynamoDB
 * system errors and throttled requests per table, and the functions' own StorageUnavailable and AuthorizerFailure
 * metrics. Math follows CloudWatch's metric math rules, which are checked only when an alarm is created:
 * a division is guarded with IF (no scalar inside an array), and each series of a sum is wrapped in FILL.
 */
export class ApiAlarms extends Construct {
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ApiAlarmsProps) {
    super(scope, id);
    // Every alarm of the stack (these, the deploy gates, any other) names its runbook section (alarm-runbook.ts).
    linkAlarmRunbooks(this);
    const t = props.thresholds;
    const { api } = props;

    this.add(
      'Api5xxRate',
      'API 5xx responses (501s of unspecified operations aside), percent of requests',
      t.serverErrorRatePercent,
      serverErrorRate(api, props.customMetrics, PERIOD),
    );
    this.add(
      'ApiP99Latency',
      'API p99 latency (ms)',
      t.p99LatencyMs,
      api.metricLatency({ period: PERIOD, statistic: 'p99' }),
    );

    for (const [name, fn] of props.functions) {
      // The authorizer's Errors count every unknown key (it throws `Unauthorized`): its real failures are
      // AuthorizerFailure below; a crash or timeout shows as AUTHORIZER_FAILURE 503s in the API 5xx rate.
      if (name !== AUTHORIZER.name) {
        this.add(
          `${name}Errors`,
          `Lambda ${name} errors`,
          t.lambdaErrors,
          fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        );
      }
      if (name === AUTHORIZER.name) continue;
      this.add(
        `${name}Throttles`,
        `Lambda ${name} throttles`,
        t.throttles,
        fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      );
    }
    // The authorizer's reserved concurrency holds every method's stage bucket at once (lib/config/capacity.ts): a
    // throttle means an authorizer slower than it was sized for, and each is a 503 only for a caller without a cached
    // decision. One throttle in 5 minutes paged for a burst of random tokens; a share of its invocations is what
    // customers notice.
    const authorizer = props.functions.get(AUTHORIZER.name);
    if (authorizer)
      this.add(
        `${AUTHORIZER.name}ThrottleRate`,
        `Lambda ${AUTHORIZER.name} throttles, percent of its invocations and throttles`,
        t.authorizerThrottleRatePercent,
        new MathExpression({
          expression:
            'IF(FILL(invocations, 0) + FILL(throttles, 0) > 0, 100 * FILL(throttles, 0) / (FILL(invocations, 0) + FILL(throttles, 0)), 0)',
          usingMetrics: {
            invocations: authorizer.metricInvocations({ period: PERIOD, statistic: 'Sum' }),
            throttles: authorizer.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
          },
          period: PERIOD,
        }),
      );
    // DynamoDB publishes both per table AND operation (see TABLE_OPERATIONS).
    const tableMetrics = [
      { suffix: 'SystemErrors', metricName: 'SystemErrors', what: 'system errors', threshold: t.storageErrors },
      { suffix: 'Throttled', metricName: 'ThrottledRequests', what: 'throttled requests', threshold: t.throttles },
    ] as const;
    for (const [name, table] of props.tables) {
      for (const m of tableMetrics) {
        this.add(
          `${name}${m.suffix}`,
          `DynamoDB ${name} ${m.what}`,
          m.threshold,
          sumOfOperations(props.tableOperations?.get(name) ?? TABLE_OPERATIONS, (operation) =>
            table.metric(m.metricName, {
              dimensionsMap: { TableName: table.tableName, Operation: operation },
              period: PERIOD,
              statistic: 'Sum',
            }),
          ),
        );
      }
    }
    const custom = (metricName: string) => customMetric(props.customMetrics, metricName, PERIOD);
    this.add(
      'StorageUnavailable',
      'Requests answered 503 because DynamoDB was unavailable',
      t.storageErrors,
      custom('StorageUnavailable'),
    );
    this.add(
      'AuthorizerFailure',
      'Authorizer failures (fail closed: 503 for every request it could not check)',
      t.lambdaErrors,
      custom('AuthorizerFailure'),
    );

    if (props.action)
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(props.action);
        alarm.addOkAction(props.action);
      }
  }

  private add(id: string, description: string, threshold: number, metric: IMetric): void {
    this.alarms.push(
      new Alarm(this, id, {
        alarmDescription: `${description} >= ${threshold} over 5 minutes`,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}

/** `FILL(getItem, 0) + FILL(putItem, 0) + …`: an operation without data adds 0 instead of emptying the sum. */
function sumOfOperations(operations: readonly Operation[], metricFor: (operation: string) => IMetric): MathExpression {
  const usingMetrics = Object.fromEntries(
    operations.map((op) => [`${op[0]!.toLowerCase()}${op.slice(1)}`, metricFor(op)]),
  );
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    period: PERIOD,
  });
}
