/**
 * API Gateway's own 429s (THROTTLED, QUOTA_EXCEEDED) never reach a function, so they are counted from the access
 * log: each stage's metric filters, evaluated against access-log lines as its format renders them, count a usage
 * plan's or the stage's refusal of a customer by cause, and neither the authorizer's Denies of banned and spent keys
 * (intended: counted apart) nor a function's own 429; the alarm on them pages the stage's topic and links its runbook section, and the
 * dashboard graphs them beside the functions' 429s.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { TELEMETRY } from '../../lib/constructs/api-function.ts';
import { RUNBOOK_PATH, slug } from '../../lib/constructs/alarm-runbook.ts';
import {
  GATEWAY_REFUSAL_METRICS,
  GATEWAY_REFUSING_CUSTOMERS_THRESHOLD,
} from '../../lib/constructs/gateway-refusals.ts';
import {
  accessLogFilterMetrics,
  matchesFilterPattern,
  parseFilterPattern,
  resolveText,
} from './filter-pattern-eval.ts';
import { metricsOf, type MetricDataQuery } from './template-queries.ts';
import { resourcesOf, synthTemplates, type CfnTemplate } from './templates.ts';

let templates: Record<StageName, CfnTemplate>;
beforeAll(() => {
  templates = synthTemplates();
}, 240_000);

/** A plan's API key id, as the access log gives it. */
const PLAN_KEY_ID = 'plankey001';

/**
 * An access-log line as API Gateway writes it: every `$context` variable of the format replaced by its value, "-"
 * for one that has none (an error type on a request the gateway passed, an API key before the authorizer named one).
 */
function lineOf(format: string, values: Record<string, string>): string {
  return format.replace(/\$context\.[A-Za-z0-9_.]+/g, (v) => values[v] ?? '-');
}

const request = (status: string, responseType: string, apiKeyId: string) => ({
  '$context.requestId': 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  '$context.httpMethod': 'GET',
  '$context.resourcePath': ROUTES[0].path,
  '$context.status': status,
  '$context.error.responseType': responseType,
  '$context.identity.apiKeyId': apiKeyId,
  '$context.authorizer.principalId': 'key_0123456789abcdef',
});

/** Sample requests and which metric each must count in (none: counted by no filter). */
const SAMPLES: { what: string; values: Record<string, string>; counts?: string }[] = [
  {
    what: "a usage plan's throttle refusing a customer",
    values: request('429', 'THROTTLED', PLAN_KEY_ID),
    counts: GATEWAY_REFUSAL_METRICS.throttled,
  },
  {
    what: 'the stage (or account) throttle, before a key was named',
    values: request('429', 'THROTTLED', '-'),
    counts: GATEWAY_REFUSAL_METRICS.throttled,
  },
  {
    what: "a usage plan's day quota refusing a customer",
    values: request('429', 'QUOTA_EXCEEDED', PLAN_KEY_ID),
    counts: GATEWAY_REFUSAL_METRICS.quotaExceeded,
  },
  {
    what: "the authorizer's Deny of a banned or spent key (intended)",
    values: request('429', 'ACCESS_DENIED', '-'),
    counts: GATEWAY_REFUSAL_METRICS.denied,
  },
  { what: "a function's own 429 (the limiter's)", values: request('429', '-', PLAN_KEY_ID) },
  { what: 'an answered request', values: request('200', '-', PLAN_KEY_ID) },
  { what: 'an unknown key', values: request('401', 'UNAUTHORIZED', '-') },
  { what: 'a WAF block', values: request('403', 'WAF_FILTERED', '-') },
];

describe('the filter pattern evaluator', () => {
  it('reads &&, || and parentheses with their precedence, * wildcards, and missing fields', () => {
    const line = '{"a":"x","b":"y"}';
    expect(matchesFilterPattern('{ $.a = "x" || $.b = "no" && $.b = "no" }', line)).toBe(true);
    expect(matchesFilterPattern('{ ($.a = "x" || $.b = "no") && $.b = "no" }', line)).toBe(false);
    expect(matchesFilterPattern('{ $.a != "x" }', line)).toBe(false);
    expect(matchesFilterPattern('{ $.b = "*" }', line)).toBe(true);
    expect(matchesFilterPattern('{ $.missing != "x" }', line)).toBe(false);
    expect(() => parseFilterPattern('{ $.a > 3 }')).toThrow(/filter pattern: cannot read/);
    expect(() => parseFilterPattern('{ $.a = x }')).toThrow(/filter pattern: cannot read/);
    expect(() => parseFilterPattern('{ $.a = $.b }')).toThrow(/not a string comparison/);
    expect(() => parseFilterPattern('ERROR')).toThrow();
  });
});

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  const t = () => templates[stage];
  const format = () => resourcesOf(t(), 'AWS::ApiGateway::Stage')[0]![1].Properties.AccessLogSetting.Format as string;
  const dimensions = { service: TELEMETRY.serviceName, stage };

  it('the filters name no resource: they count by response type alone', () => {
    const refs = accessLogFilterMetrics(t()).flatMap((m) => JSON.stringify(m.pattern).match(/"Ref":"\w+"/g) ?? []);
    expect(refs).toEqual([]);
  });

  it('every access-log line carries the dimensions the metrics are published under, and keeps its fields', () => {
    const line = JSON.parse(lineOf(format(), request('200', '-', PLAN_KEY_ID))) as Record<string, string>;
    expect(line).toMatchObject(dimensions);
    // The fields the runbook's queries and other readers use, under their names.
    expect(line).toMatchObject({ status: '200', errorType: '-', apiKeyId: PLAN_KEY_ID });
    for (const f of ['requestId', 'keyId', 'resourcePath', 'wafStatus', 'xrayTraceId']) expect(line).toHaveProperty(f);
  });

  it('counts the gateway refusing customers by cause, the Denies apart, and never a function’s 429', () => {
    const metrics = accessLogFilterMetrics(t());
    expect(metrics.map((m) => m.name).sort()).toEqual(Object.values(GATEWAY_REFUSAL_METRICS).sort());
    for (const m of metrics) {
      expect(m.namespace, m.name).toBe(TELEMETRY.metricsNamespace);
      // The functions' exact dimension set and values (as the access log gives them), so the alarm finds them.
      expect(m.dimensions, m.name).toEqual(dimensions);
    }
    const pattern = (name: string) => resolveText(metrics.find((m) => m.name === name)!.pattern, {});
    for (const sample of SAMPLES) {
      const line = lineOf(format(), sample.values);
      const counted = metrics.filter((m) => matchesFilterPattern(pattern(m.name), line)).map((m) => m.name);
      expect(counted, sample.what).toEqual(sample.counts ? [sample.counts] : []);
    }
    // Another stage's lines (the same account may hold both) count in neither's metrics.
    const other = lineOf(format(), request('429', 'THROTTLED', PLAN_KEY_ID)).replace(
      `"stage":"${stage}"`,
      '"stage":"x"',
    );
    expect(metrics.filter((m) => matchesFilterPattern(pattern(m.name), other))).toEqual([]);
  });

  it('alarms on the customers’ refusals, past a small threshold, to the topic, with its runbook section', () => {
    const alarms = resourcesOf(t(), 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      a.Properties.Metrics
        ? metricsOf(a.Properties).some((m) => m.MetricName === GATEWAY_REFUSAL_METRICS.throttled)
        : false,
    );
    expect(alarms).toHaveLength(1);
    const [id, alarm] = alarms[0]!;
    expect(id).toMatch(/^GatewayRefusalsRefusingCustomers/);
    const p = alarm.Properties;
    expect(p.Threshold).toBe(GATEWAY_REFUSING_CUSTOMERS_THRESHOLD);
    expect(p.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
    expect(p.EvaluationPeriods).toBe(1);
    expect(p.TreatMissingData).toBe('notBreaching');
    const watched = metricsOf(p);
    expect(watched.map((m) => m.MetricName).sort()).toEqual(
      [GATEWAY_REFUSAL_METRICS.quotaExceeded, GATEWAY_REFUSAL_METRICS.throttled].sort(),
    );
    for (const m of watched) {
      expect(m.Namespace).toBe(TELEMETRY.metricsNamespace);
      expect(Object.fromEntries((m.Dimensions ?? []).map((d) => [d.Name, d.Value]))).toEqual(dimensions);
    }
    const queries = p.Metrics as (MetricDataQuery & { MetricStat?: { Period?: number } })[];
    for (const q of queries.filter((x) => x.MetricStat)) expect(q.MetricStat!.Period).toBe(300);
    const returned = queries.find((q) => q.ReturnData !== false)!;
    // Each cause has data only when it happens: a sum without FILL is empty while the other is quiet.
    expect(returned.Expression).toBe('FILL(throttled, 0) + FILL(quotaExceeded, 0)');
    // Wired like every other alarm: the stage's topic on ALARM and on OK, and the runbook link.
    expect(p.AlarmActions).toHaveLength(1);
    expect(p.OKActions).toEqual(p.AlarmActions);
    expect(p.AlarmDescription).toContain(`Runbook: ${RUNBOOK_PATH}#${slug('Gateway refusing customers')}`);
  });

  it('graphs the refusals by cause beside the functions’ 429s', () => {
    const [, dashboard] = resourcesOf(t(), 'AWS::CloudWatch::Dashboard')[0]!;
    const body = dashboard.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
    const text = (typeof body === 'string' ? [body] : body['Fn::Join'][1])
      .map((p) => (typeof p === 'string' ? p : '@ref'))
      .join('');
    const widgets = (JSON.parse(text) as { widgets: { y: number; x: number; properties: any }[] }).widgets;
    const gateway = widgets.find((w) => String(w.properties.title).startsWith('Gateway 429s by cause'))!;
    const functions = widgets.find((w) => w.properties.title === '429 by reason')!;
    expect(gateway).toBeDefined();
    expect(gateway.y).toBe(functions.y);
    const rows = (gateway.properties.metrics as unknown[][]).map((r) => r.filter((x) => typeof x === 'string'));
    for (const name of Object.values(GATEWAY_REFUSAL_METRICS))
      expect(rows).toContainEqual([TELEMETRY.metricsNamespace, name, 'service', dimensions.service, 'stage', stage]);
  });
});

it('the runbook section starts from `npm run capacity`, then the keys’ usage, the figures and the account quota', () => {
  const text = readFileSync(RUNBOOK_PATH, 'utf8');
  const start = text.indexOf('\n### Gateway refusing customers\n');
  expect(start).toBeGreaterThan(0);
  const section = text.slice(start + 1, text.indexOf('\n### ', start + 5));
  const firstCommand = /^```sh\n(.+)$/m.exec(section)?.[1];
  expect(firstCommand).toBe('npm run capacity');
  for (const s of [
    'npm run admin -- keys usage',
    'MethodSettings',
    'UsagePlan',
    'get-account --query throttleSettings',
    'service-quotas',
    GATEWAY_REFUSAL_METRICS.denied,
  ])
    expect(section, s).toContain(s);
});
