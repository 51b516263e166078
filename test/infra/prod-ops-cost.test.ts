/**
 * What the stages cost and what an audit reads from the templates: encryption, log retention, traces, the billed
 * alarm metrics (counted from the route table, as docs/deployment.md states them), a restored table, and the
 * documented grants. Each test names the AWS rule it encodes and runs on both stages' synthesized templates.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLES, tablesOf } from '../../contract/tables.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { alarmMetricTotal, alarmMetrics } from '../../lib/api/alarm-metrics.ts';
import { DEPLOY_HOOK_METADATA } from '../../lib/stacks/metadata.ts';
import { FUNCTION_ACCESS, functionConstructId } from '../../lib/stacks/function-access.ts';
import {
  RESTORED,
  RESTORED_TABLE,
  deployed,
  functionNamed,
  ofType,
  restoredApp,
  warningsOf,
  type App,
  type Resource,
} from './prod-ops-fixture.ts';

/** The API's functions: every one but the pre-traffic hook (CodeDeploy's, with no table and no API traffic). */
const apiFunctions = (r: Record<string, Resource>) =>
  ofType(r, 'AWS::Lambda::Function').filter(
    ([, f]) => !(f as { Metadata?: Record<string, unknown> }).Metadata?.[DEPLOY_HOOK_METADATA],
  );

const apps = {} as { restored: App };
let templates = {} as Record<StageName, Record<string, Resource>>;

beforeAll(() => {
  templates = deployed().templates;
  apps.restored = restoredApp();
}, 240_000);

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  const t = () => templates[stage];

  it('item 12: encrypts every table with the AWS owned key', () => {
    for (const [id, table] of ofType(t(), 'AWS::DynamoDB::GlobalTable'))
      expect(table.Properties.SSESpecification, id).toEqual({ SSEEnabled: false });
  });

  // API Gateway stores the access log destination without LogGroup.Arn's trailing ":*": a template that renders
  // the Arn attribute drifts on every drift detection (flag @aws-cdk/aws-apigateway:logGroupDestinationArnWithoutWildcard).
  it('item 12: names the access log group by an ARN without the trailing :*', () => {
    const [[, s]] = ofType(t(), 'AWS::ApiGateway::Stage') as [[string, Resource]];
    const destination = JSON.stringify(s.Properties.AccessLogSetting.DestinationArn);
    expect(destination).not.toContain('"Fn::GetAtt":["ApiAccessLogs","Arn"]');
    expect(destination).toContain(':log-group:');
    expect(destination).toContain('{"Ref":"ApiAccessLogs"}');
  });

  // CloudFormation cannot re-point a table resource at another table: a point-in-time restore creates a new
  // table, so the stack must stop creating its own and use the restored one by name (grants, environment,
  // alarms, outputs), while the replaced one leaves the template (kept by its DeletionPolicy in production).
  it('item 12: points the stack at an existing (restored) table given by context', () => {
    const restored = Template.fromStack(apps.restored.stacks[stage]).toJSON();
    const r = restored.Resources as Record<string, Resource>;
    const table = RESTORED_TABLE;
    expect(r[tableLogicalIdOf(table)]).toBeUndefined();
    // The other tables are still the stack's own.
    for (const other of TABLES.filter((d) => d.id !== table.id))
      expect(r[tableLogicalIdOf(other)]?.Type, other.id).toBe('AWS::DynamoDB::GlobalTable');
    // Every function whose access names the table, and no other (a function's environment holds its tables only).
    for (const [id, f] of apiFunctions(r)) {
      const access = FUNCTION_ACCESS[(f.Properties.Description as string).split(': ')[1]!]!;
      const uses = tablesOf(access.tables).some((d) => d.id === table.id);
      expect(f.Properties.Environment.Variables[table.envVar], id).toBe(uses ? RESTORED : undefined);
    }
    const grants = ofType(r, 'AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[]);
    const onTable = grants.filter((g) => JSON.stringify(g.Resource).includes(`:table/${RESTORED}`));
    // Every action some function is granted on the table or its indexes (contract/operations/ declares them).
    const declared = Object.values(FUNCTION_ACCESS).flatMap((a) =>
      a.tables.filter((g) => g.table.id === table.id).flatMap((g) => g.actions),
    );
    expect(new Set(onTable.flatMap((g) => [g.Action].flat()))).toEqual(new Set(declared));
    expect(declared.length).toBeGreaterThan(0);
    expect(JSON.stringify(restored.Outputs)).toContain(RESTORED);
    const alarmsOnTable = ofType(r, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      JSON.stringify(a.Properties).includes(`"Value":"${RESTORED}"`),
    );
    expect(alarmsOnTable).toHaveLength(2);
    expect(warningsOf(apps.restored, stage).some((w) => w.includes(RESTORED))).toBe(true);
  });

  // X-Ray bills per trace recorded; Lambda's Active mode samples on its own (1/s + 5 %) in every function on top of
  // API Gateway's decision. PassThrough records only what the stage's sampling rule sampled.
  it('item 11: traces what the stage samples, at the stage’s rate', () => {
    for (const [id, f] of apiFunctions(t())) expect(f.Properties.TracingConfig, id).toEqual({ Mode: 'PassThrough' });
    // The pre-traffic hook leaves TracingConfig out, which is Lambda's PassThrough (no X-Ray grant in its role):
    // CodeDeploy's invocations arrive unsampled, so it records nothing either.
    for (const [id, f] of ofType(t(), 'AWS::Lambda::Function').filter(
      ([, f]) => (f as { Metadata?: Record<string, unknown> }).Metadata?.[DEPLOY_HOOK_METADATA],
    ))
      expect(f.Properties.TracingConfig, id).toBeUndefined();
    const [[, rule]] = ofType(t(), 'AWS::XRay::SamplingRule') as [[string, Resource]];
    expect(rule.Properties.SamplingRule).toMatchObject({
      FixedRate: STAGES[stage].traceSampleRate,
      ReservoirSize: 1,
      ServiceName: `${STAGES[stage].stackName}/v1`,
      ServiceType: 'AWS::ApiGateway::Stage',
    });
    expect(rule.Properties.SamplingRule.RuleName.length).toBeLessThanOrEqual(32);
  });

  // CloudWatch Logs bills storage per GB-month for as long as the retention keeps it.
  it('item 11: keeps access logs and function logs for their own, chosen retention', () => {
    expect(t().ApiAccessLogs!.Properties.RetentionInDays).toBe(STAGES[stage].accessLogRetention);
    for (const name of Object.keys(FUNCTION_ACCESS)) {
      const id = `${functionConstructId(name)}Logs`;
      expect(t()[id]!.Properties.RetentionInDays, id).toBe(STAGES[stage].logRetention);
    }
  });

  // CloudWatch bills each metric an alarm uses (every metric of a math alarm); a Logs Insights widget runs its
  // query (billed per GB scanned) on every dashboard refresh.
  it('item 11: bills the alarm metrics docs/runbook.md counts, and runs no Logs Insights query on refresh', () => {
    // Each alarm's billed metrics: every metric of a math alarm, or its one metric.
    const alarms = ofType(t(), 'AWS::CloudWatch::Alarm').map(([id, a]) => ({
      id,
      metrics: a.Properties.Metrics ? a.Properties.Metrics.filter((m: any) => m.MetricStat).length : 1,
    }));
    // The rows lib/api/alarm-metrics.ts counts from the route table (and `npm run openapi` writes into the doc):
    // each alarm of the template belongs to exactly one row, and each row bills what it says.
    const rows = alarmMetrics();
    for (const a of alarms) expect(rows.filter((r) => r.ids.test(a.id)).length, a.id).toBe(1);
    for (const r of rows)
      expect(
        alarms.filter((a) => r.ids.test(a.id)).reduce((n, a) => n + a.metrics, 0),
        r.alarm,
      ).toBe(r.metrics);
    expect(alarms.reduce((n, a) => n + a.metrics, 0)).toBe(alarmMetricTotal());
    const [[, dashboard]] = ofType(t(), 'AWS::CloudWatch::Dashboard') as [[string, Resource]];
    expect(JSON.stringify(dashboard.Properties.DashboardBody)).not.toContain('"type\\":\\"log\\"');
  });
});

describe('item 12: docs/architecture.md says what each function may do', () => {
  // The "Least privilege" table, read back and compared with the IAM policies of every function in both templates.
  const documented = (): Map<string, Set<string>> => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const section = doc.slice(
      doc.indexOf('## Least privilege'),
      doc.indexOf('\n## ', doc.indexOf('## Least privilege') + 3),
    );
    const out = new Map<string, Set<string>>();
    for (const line of section.split('\n')) {
      const m = /^\| (\w+) \| (.+) \|$/.exec(line);
      if (!m || m[1] === 'Function') continue;
      const grants = new Set<string>();
      for (const part of m[2]!.split('; ')) {
        // Not a DynamoDB grant (test/infra/cursor-secret.test.ts checks the secret's).
        if (part.includes('cursor secret')) continue;
        const g = /^((?:`\w+`(?:, )?)+) on (\w+)(?: index `(\w+)`)?/.exec(part);
        if (!g) throw new Error(`unreadable grant "${part}"`);
        for (const a of g[1]!.match(/`(\w+)`/g)!) grants.add(`${a.slice(1, -1)} ${g[2]}${g[3] ? `/${g[3]}` : ''}`);
      }
      out.set(m[1]!, grants);
    }
    return out;
  };

  it.each(STAGE_NAMES)('matches the DynamoDB grants of every function in %s', (stage) => {
    const t = templates[stage];
    const tableIds = new Map(TABLES.map((d) => [tableLogicalIdOf(d), d.id]));
    const docs = documented();
    expect([...docs.keys()].sort()).toEqual(Object.keys(FUNCTION_ACCESS).sort());
    for (const name of Object.keys(FUNCTION_ACCESS)) {
      const [, fn] = functionNamed(t, name);
      const roleId = fn.Properties.Role['Fn::GetAtt'][0];
      const granted = new Set<string>();
      for (const [, p] of ofType(t, 'AWS::IAM::Policy').filter(([, p]) =>
        p.Properties.Roles.some((r: any) => r.Ref === roleId),
      ))
        for (const s of p.Properties.PolicyDocument.Statement as any[])
          for (const action of [s.Action].flat() as string[]) {
            if (!action.startsWith('dynamodb:')) continue;
            for (const resource of [s.Resource].flat()) {
              const text = JSON.stringify(resource);
              const table = [...tableIds].find(([id]) => text.includes(`"${id}"`))![1];
              const index = /\/index\/(\w+)/.exec(text)?.[1];
              granted.add(`${action.slice('dynamodb:'.length)} ${table}${index ? `/${index}` : ''}`);
            }
          }
      expect([...granted].sort(), name).toEqual([...docs.get(name)!].sort());
    }
  });
});
