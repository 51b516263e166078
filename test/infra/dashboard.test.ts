/**
 * The stage dashboard shows what the issue of running it needs, and every custom metric it graphs is one the
 * functions really emit (or a metric filter on the access log publishes), with the exact dimension set they emit it
 * with: CloudWatch identifies a metric by namespace, name and its full set of dimensions ("a metric is uniquely
 * defined by a name, a namespace, and zero or more dimensions"), so a widget on a subset or superset of the emitted
 * dimensions stays empty for ever.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { PLANS } from '../../contract/plans.ts';
import { TABLES } from '../../contract/tables.ts';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { captureEmf, type EmittedMetric } from './emf-capture.ts';
import { accessLogFilterMetrics } from './filter-pattern-eval.ts';
import { resourcesOf, synthTemplates, type CfnTemplate } from './templates.ts';

let templates: Record<StageName, CfnTemplate>;
beforeAll(() => {
  templates = synthTemplates();
}, 240_000);

type MetricRow = { namespace: string; name: string; dimensions: Record<string, string>; stat?: string };

/** The dashboard body as JSON, each CloudFormation reference replaced by `@<logical id>` (or `@<pseudo>`). */
function bodyOf(t: CfnTemplate): { widgets: { type: string; properties: Record<string, any> }[] } {
  const [, dashboard] = resourcesOf(t, 'AWS::CloudWatch::Dashboard')[0]!;
  const body = dashboard.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const parts: unknown[] = typeof body === 'string' ? [body] : body['Fn::Join'][1];
  const text = parts
    .map((p) => (typeof p === 'string' ? p : `@${(p as any).Ref ?? (p as any)['Fn::GetAtt']?.[0] ?? 'token'}`))
    .join('');
  return JSON.parse(text);
}

/** Every metric row of every graph widget (math expressions are rows with an `expression`, skipped). */
function metricsOf(t: CfnTemplate): MetricRow[] {
  return bodyOf(t).widgets.flatMap((w) =>
    ((w.properties.metrics ?? []) as unknown[][])
      .filter((row) => typeof row[0] === 'string')
      .map((row) => {
        const options = (typeof row.at(-1) === 'object' ? row.at(-1) : {}) as { stat?: string };
        const plain = row.filter((x) => typeof x === 'string') as string[];
        const [namespace, name, ...dims] = plain;
        const dimensions: Record<string, string> = {};
        for (let i = 0; i < dims.length; i += 2) dimensions[dims[i]!] = dims[i + 1]!;
        return { namespace: namespace!, name: name!, dimensions, stat: options.stat };
      }),
  );
}

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  const t = () => templates[stage];
  const functionId = (name: string) =>
    resourcesOf(t(), 'AWS::Lambda::Function').find(([, f]) => f.Properties.Description?.endsWith(`: ${name}`))![0];
  const has = (m: Partial<MetricRow> & { name: string }) =>
    metricsOf(t()).some(
      (r) =>
        r.name === m.name &&
        (!m.namespace || r.namespace === m.namespace) &&
        (!m.stat || r.stat === m.stat) &&
        Object.entries(m.dimensions ?? {}).every(([k, v]) => r.dimensions[k] === v),
    );

  it('has one dashboard', () => {
    expect(resourcesOf(t(), 'AWS::CloudWatch::Dashboard')).toHaveLength(1);
  });

  it('shows API requests, 4xx, 5xx and latency p50/p99', () => {
    for (const name of ['Count', '4XXError', '5XXError'])
      expect(has({ namespace: 'AWS/ApiGateway', name }), name).toBe(true);
    for (const stat of ['p50', 'p99'])
      expect(has({ namespace: 'AWS/ApiGateway', name: 'Latency', stat }), stat).toBe(true);
  });

  it('shows requests and latency p50/p99 per operation', () => {
    for (const route of ROUTES) {
      const dimensions = { FunctionName: `@${functionId(route.operationId)}` };
      expect(has({ namespace: 'AWS/Lambda', name: 'Invocations', dimensions }), route.operationId).toBe(true);
      for (const stat of ['p50', 'p99'])
        expect(
          has({ namespace: 'AWS/Lambda', name: 'Duration', stat, dimensions }),
          `${route.operationId} ${stat}`,
        ).toBe(true);
    }
  });

  it('shows 429s by reason and by plan, authorizer denials vs failures, and deprecated calls', () => {
    for (const code of ['rate_limited', 'quota_exceeded', 'key_banned'])
      expect(has({ name: 'RateLimited', dimensions: { code } }), code).toBe(true);
    for (const plan of Object.keys(PLANS)) expect(has({ name: 'RateLimited', dimensions: { plan } }), plan).toBe(true);
    expect(has({ name: 'AuthorizerDenied' })).toBe(true);
    expect(has({ name: 'AuthorizerFailure' })).toBe(true);
    for (const route of ROUTES.filter((r) => r.deprecation)) {
      expect(has({ name: 'DeprecatedOperationCall', dimensions: { operation: route.operationId } })).toBe(true);
    }
    // Not vacuous: some operation is deprecated (the route table says which).
    expect(ROUTES.some((r) => r.deprecation)).toBe(true);
  });

  it('shows consumed capacity and throttles per table', () => {
    const tables = resourcesOf(t(), 'AWS::DynamoDB::GlobalTable').map(([id]) => `@${id}`);
    expect(tables).toHaveLength(TABLES.length);
    for (const table of tables) {
      for (const name of [
        'ConsumedReadCapacityUnits',
        'ConsumedWriteCapacityUnits',
        'ReadThrottleEvents',
        'WriteThrottleEvents',
      ]) {
        expect(has({ namespace: 'AWS/DynamoDB', name, dimensions: { TableName: table } }), `${table} ${name}`).toBe(
          true,
        );
      }
    }
  });

  it('shows the state of every alarm in the stack', () => {
    const widget = bodyOf(t()).widgets.find((w) => w.type === 'alarm')!;
    const shown = (widget.properties.alarms as string[]).map((a) => a.slice(1)).sort();
    expect(shown).toEqual(
      resourcesOf(t(), 'AWS::CloudWatch::Alarm')
        .map(([id]) => id)
        .sort(),
    );
  });

  describe('custom metrics', () => {
    let emitted: EmittedMetric[];
    beforeAll(async () => {
      // The stage's function environment as deployed (references, e.g. table names, left out).
      const env: Record<string, string> = {};
      for (const [, fn] of resourcesOf(t(), 'AWS::Lambda::Function')) {
        for (const [k, v] of Object.entries(fn.Properties.Environment?.Variables ?? {}))
          if (typeof v === 'string' && k !== 'NODE_OPTIONS') env[k] = v;
      }
      emitted = await captureEmf(env, inject('dynamoEndpoint'));
    }, 180_000);

    // The metric filters on the access log publish too (the gateway's own 429s): under the dimensions the log's
    // lines carry, with the values they carry.
    it('graphs only (namespace, name, exact dimension set) combinations the functions or the access log publish', () => {
      const key = (m: { namespace: string; name: string; dimensions: Readonly<Record<string, unknown>> }) =>
        JSON.stringify([m.namespace, m.name, Object.keys(m.dimensions).sort()]);
      const published = [...emitted, ...accessLogFilterMetrics(t())];
      const emittedKeys = new Set(published.map(key));
      const custom = metricsOf(t()).filter((m) => !m.namespace.startsWith('AWS/'));
      expect(custom.length).toBeGreaterThan(0);
      expect(custom.filter((m) => !emittedKeys.has(key(m))).map(key)).toEqual([]);
      // And the dimension values the code sets: service and stage as emitted, breakdowns as the code names them.
      for (const m of custom) {
        expect(m.dimensions.stage).toBe(stage);
        const sameSet = published.filter((e) => key(e) === key(m));
        expect(
          sameSet.some((e) => e.dimensions.service === m.dimensions.service),
          key(m),
        ).toBe(true);
      }
    });
  });
});
