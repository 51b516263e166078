/**
 * The billed alarm metrics of one stage, counted from the route table: CloudWatch bills every metric an alarm uses.
 * `npm run openapi` writes the rows into docs/runbook.md; test/infra/prod-ops-cost.test.ts checks them against both
 * synthesized templates, so an added operation leaves neither stale. Plain data, no CDK imports.
 */
import { AUTHORIZER, ROUTES, type Route } from '../../contract/routes.ts';
import { tableOperations } from '../stacks/function-access.ts';

export interface AlarmMetricRow {
  /** The alarm (or alarms: one per function or table) as docs/runbook.md names it. */
  readonly alarm: string;
  /** How many there are and what each sums. */
  readonly detail: string;
  /**
   * The alarms' logical-id pattern in the template (the construct ids of lib/constructs/alarms.ts,
   * gateway-refusals.ts, canary-deployments.ts).
   */
  readonly ids: RegExp;
  readonly metrics: number;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export function alarmMetrics(routes: readonly Route[] = ROUTES): AlarmMetricRow[] {
  const ops = routes.length;
  const names = routes.map((r) => r.operationId).join('|');
  const tables = [...tableOperations(routes)].map(([table, operations]) => ({
    alarm: `DynamoDB ${table} system errors, throttled requests`,
    detail: `2 alarms, each summing ${plural(operations.length, 'operation')} (${operations.join(', ')})`,
    ids: new RegExp(`^Alarms${table}(SystemErrors|Throttled)[0-9A-F]{8}$`),
    metrics: 2 * operations.length,
  }));
  return [
    {
      alarm: 'API 5xx rate',
      detail: '5XXError, Count, NotImplemented',
      ids: /^AlarmsApi5xxRate/,
      metrics: 3,
    },
    { alarm: 'API p99 latency', detail: 'Latency', ids: /^AlarmsApiP99Latency/, metrics: 1 },
    {
      alarm: 'Lambda errors',
      detail: `one per operation (${ops})`,
      ids: new RegExp(`^Alarms(${names})Errors[0-9A-F]{8}$`),
      metrics: ops,
    },
    {
      alarm: 'Lambda throttles',
      detail: `one per operation (${ops})`,
      ids: new RegExp(`^Alarms(${names})Throttles[0-9A-F]{8}$`),
      metrics: ops,
    },
    {
      alarm: 'Authorizer throttle rate',
      detail: 'Throttles, Invocations',
      ids: new RegExp(`^Alarms${AUTHORIZER.name}ThrottleRate`),
      metrics: 2,
    },
    ...tables,
    { alarm: 'StorageUnavailable', detail: 'the functions’ metric', ids: /^AlarmsStorageUnavailable/, metrics: 1 },
    { alarm: 'AuthorizerFailure', detail: 'the authorizer’s metric', ids: /^AlarmsAuthorizerFailure/, metrics: 1 },
    {
      alarm: 'Gateway refusing customers',
      detail: 'GatewayThrottled, GatewayQuotaExceeded (metric filters on the access log)',
      ids: /^GatewayRefusalsRefusingCustomers/,
      metrics: 2,
    },
    {
      alarm: 'Deploy gate: operation failures, new version against old',
      detail: `one per operation (${ops}): Invocations, Errors, ServerError of the alias and of its new version`,
      ids: new RegExp(`^Deploy(${names})Errors[0-9A-F]{8}$`),
      metrics: 6 * ops,
    },
    {
      alarm: 'Deploy gate: authorizer denials and failures, new version against old',
      detail: 'Invocations, Errors of the alias and of its new version',
      ids: new RegExp(`^Deploy${AUTHORIZER.name}DenialRate`),
      metrics: 4,
    },
  ];
}

/** The stage's billed alarm metrics in all. */
export const alarmMetricTotal = (routes: readonly Route[] = ROUTES): number =>
  alarmMetrics(routes).reduce((n, r) => n + r.metrics, 0);
