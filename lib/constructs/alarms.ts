import { Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  TreatMissingData,
  type IAlarmAction,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { AlarmThresholds } from '../config/stages.ts';

export interface ApiAlarmsProps {
  readonly api: RestApi;
  /** Functions by a readable name (operationId, `authorizer`). */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Tables by their definition id. */
  readonly tables: ReadonlyMap<string, ITable>;
  readonly thresholds: AlarmThresholds;
  /** @default - no action */
  readonly action?: IAlarmAction;
}

const PERIOD = Duration.minutes(5);
/** The operations the service performs (an alarm's math expression may use at most 10 metrics). */
const OPERATIONS = [Operation.GET_ITEM, Operation.PUT_ITEM, Operation.UPDATE_ITEM, Operation.QUERY, Operation.SCAN, Operation.TRANSACT_WRITE_ITEMS];

/**
 * CloudWatch alarms: API 5xx rate, API p99 latency, Lambda errors and throttles per function, DynamoDB system
 * errors and throttled requests per table, and the handlers' StorageUnavailable metric (Powertools).
 */
export class ApiAlarms extends Construct {
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: ApiAlarmsProps) {
    super(scope, id);
    const t = props.thresholds;
    const { api } = props;

    this.add('Api5xxRate', 'API 5xx responses, percent of requests', t.serverErrorRatePercent,
      new MathExpression({
        expression: '100 * errors / MAX([requests, 1])',
        usingMetrics: {
          errors: api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
          requests: api.metricCount({ period: PERIOD, statistic: 'SampleCount' }),
        },
        period: PERIOD,
      }));
    this.add('ApiP99Latency', 'API p99 latency (ms)', t.p99LatencyMs,
      api.metricLatency({ period: PERIOD, statistic: 'p99' }));

    for (const [name, fn] of props.functions) {
      this.add(`${name}Errors`, `Lambda ${name} errors`, t.lambdaErrors, fn.metricErrors({ period: PERIOD, statistic: 'Sum' }));
      this.add(`${name}Throttles`, `Lambda ${name} throttles`, t.throttles, fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }));
    }
    for (const [name, table] of props.tables) {
      this.add(`${name}SystemErrors`, `DynamoDB ${name} system errors`, t.storageErrors,
        table.metricSystemErrorsForOperations({ operations: OPERATIONS, period: PERIOD, statistic: 'Sum' }));
      this.add(`${name}Throttled`, `DynamoDB ${name} throttled requests`, t.throttles,
        table.metricThrottledRequestsForOperations({ operations: OPERATIONS, period: PERIOD, statistic: 'Sum' }));
    }
    this.add('StorageUnavailable', 'Requests answered 503 because DynamoDB was unavailable', t.storageErrors,
      new Metric({
        namespace: 'AnimalStore',
        metricName: 'StorageUnavailable',
        dimensionsMap: { service: 'animal-store' },
        period: PERIOD,
        statistic: 'Sum',
      }));

    if (props.action) for (const alarm of this.alarms) { alarm.addAlarmAction(props.action); alarm.addOkAction(props.action); }
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
