/**
 * Every deploy gate of both stages, as CloudFormation will create it, reads only its own function's metrics, and
 * among them that function's new version (the one the template points the alias at): nothing anyone else's traffic
 * moves (the gateway's 5XXError or Count, another function). What its metric math does on randomly routed canaries
 * (floods, noise, an outsider's known 500, failing versions) is gate-simulation.test.ts's. Bundling is skipped, as
 * in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { GATE_MARGIN, VERSION_DIMENSION } from '../../lib/constructs/version-gates.ts';
import { configNameWeight, routingWeight, shiftWeight } from '../../lib/preflight/canary-timing.ts';
import { evaluateAt } from './metric-eval.ts';
import { deployGates, resourcesOf, synthesizeStages, type DeployGate } from './stack-fixture.ts';

synthesizeStages();

type Gate = DeployGate;
const gates = deployGates;

const dimsOf = (metric: any): Record<string, unknown> =>
  Object.fromEntries((metric.Dimensions ?? []).map((d: { Name: string; Value: unknown }) => [d.Name, d.Value]));
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What is wrong with one metric of a gate: not its own function's (Lambda's metric of its alias, or the function's
 * own per-operation count), or, for a per-version metric, another version than the one deployed.
 */
function problem(g: Gate, metric: any): string | undefined {
  const dims = dimsOf(metric);
  const versioned = 'ExecutedVersion' in dims || VERSION_DIMENSION in dims;
  const version = dims.ExecutedVersion ?? dims[VERSION_DIMENSION];
  if (versioned && !same(version, g.alias.FunctionVersion)) return 'another version';
  if (metric.Namespace === 'AWS/Lambda') {
    const fn = g.alias.FunctionName;
    if (!same(dims.FunctionName, fn)) return 'another function';
    if (!same(dims.Resource, { 'Fn::Join': ['', [fn, `:${g.alias.Name}`]] })) return 'not its alias';
    return undefined;
  }
  if (metric.Namespace.startsWith('AWS/')) return `an ${metric.Namespace} metric`;
  return dims.operation === g.fn ? undefined : 'another operation';
}

describe.each(STAGE_NAMES)('stage %s: every deploy gate', (stage) => {
  it('reads its own function alone, and that function’s new version (ExecutedVersion / version)', () => {
    const offenders: string[] = [];
    for (const g of gates(stage)) {
      const metrics = (g.alarm.Metrics ?? [{ MetricStat: { Metric: g.alarm } }]) as any[];
      const stats = metrics
        .filter((q) => q.MetricStat)
        .map((q) => ({ ...q.MetricStat.Metric, Namespace: q.MetricStat.Metric.Namespace ?? g.alarm.Namespace }));
      for (const m of stats) {
        const p = problem(g, m);
        if (p) offenders.push(`${g.alarmId} (${g.fn}) reads ${m.Namespace}/${m.MetricName}: ${p}`);
      }
      const ofNewVersion = stats.some((m) =>
        same(dimsOf(m).ExecutedVersion ?? dimsOf(m)[VERSION_DIMENSION], g.alias.FunctionVersion),
      );
      if (!ofNewVersion) offenders.push(`${g.alarmId} (${g.fn}) reads no metric of the version it deploys`);
    }
    expect(offenders).toEqual([]);
    expect(gates(stage).length).toBeGreaterThan(1);
  });
});

/**
 * The gate's value on one bucket: `all` and `neu` invocations of the alias and of the new version, `failed` and
 * `newFailed` failures (a 5xx the operation answered; the authorizer's throws).
 */
function judge(g: Gate, b: { all: number; neu: number; failed: number; newFailed: number }): number | undefined {
  const queries = g.alarm.Metrics as any[];
  const values: Record<string, number> = {};
  for (const q of queries.filter((m) => m.MetricStat)) {
    const m = q.MetricStat.Metric;
    const dims = dimsOf(m);
    const isNew = 'ExecutedVersion' in dims || VERSION_DIMENSION in dims;
    // An operation's failures here are 5xx it answered (ServerError), no crash; the authorizer's are its throws.
    const counts =
      m.MetricName === 'Invocations' ||
      m.MetricName === 'ServerError' ||
      (m.MetricName === 'Errors' && g.fn === AUTHORIZER.name);
    const [all, neu] = m.MetricName === 'Invocations' ? [b.all, b.neu] : [b.failed, b.newFailed];
    values[q.Id] = counts ? (isNew ? neu : all) : 0;
  }
  return evaluateAt(queries.find((q) => q.ReturnData !== false).Expression, values);
}

describe.each(STAGE_NAMES)('stage %s: every deploy gate, in the bucket the shift starts in', (stage) => {
  it('takes the new version’s share as at least its group’s canary weight: an outsider’s burst at that bucket’s end does not fire it', () => {
    const r = resourcesOf(stage);
    for (const g of gates(stage)) {
      const group = Object.values(r).find(
        (x) =>
          x.Type === 'AWS::CodeDeploy::DeploymentGroup' &&
          (x.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).some((a) => a.Name.Ref === g.alarmId),
      )!;
      const weight = shiftWeight({ Resources: r } as never, group.Properties.DeploymentConfigName);
      expect(weight, g.alarmId).toBeGreaterThan(0);
      expect(weight, g.alarmId).toBeLessThan(1);
      // 30,000 requests of the old version alone before the shift, then 300 known 500s routed at the weight.
      const burst = 300;
      const onNew = Math.round(burst * weight);
      const shiftBucket = { all: 30_000 + burst, neu: onNew, failed: burst, newFailed: onNew };
      expect(judge(g, shiftBucket), g.alarmId).toBeLessThan(GATE_MARGIN);
      // A full bucket where the new version alone fails 15 % of its share still fires.
      const failing = { all: 3_000, neu: 300, failed: 45, newFailed: 45 };
      expect(judge(g, failing), g.alarmId).toBeGreaterThanOrEqual(GATE_MARGIN);
    }
  });
});

it('the weight a gate floors the share at is its config’s least share of the shift: a canary’s, a linear first step', () => {
  expect(configNameWeight('CodeDeployDefault.LambdaCanary10Percent10Minutes')).toBe(0.1);
  expect(configNameWeight('CodeDeployDefault.LambdaLinear10PercentEvery1Minute')).toBe(0.1);
  expect(configNameWeight('CodeDeployDefault.LambdaAllAtOnce')).toBe(1);
  expect(() => configNameWeight('MyOwnConfig')).toThrow(/unknown deployment config/);
  expect(routingWeight({ type: 'TimeBasedCanary', canaryPercentage: 5 })).toBe(0.05);
  expect(routingWeight({ type: 'TimeBasedLinear', linearPercentage: 20 })).toBe(0.2);
  expect(routingWeight({ type: 'AllAtOnce' })).toBe(1);
});
