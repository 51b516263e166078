/**
 * Every deploy gate of both stages, as CloudFormation will create it: (1) it reads only its own function's metrics,
 * and among them that function's new version (the one the template points the alias at): nothing anyone else's
 * traffic moves (the gateway's 5XXError or Count, another function); (2) its own metric math, evaluated
 * (metric-eval.ts) on the datapoints Lambda and the functions would publish during a canary, holds through a flood
 * and trips on a failing version. Bundling is skipped, as in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { VERSION_DIMENSION } from '../../lib/constructs/version-gates.ts';
import { evaluateAt } from './metric-eval.ts';
import { resourcesOf, synthesizeStages } from './stack-fixture.ts';

synthesizeStages();

interface Gate {
  readonly fn: string;
  readonly alarmId: string;
  readonly alarm: Record<string, any>;
  readonly alias: Record<string, any>;
}

/** Every alarm of every CodeDeploy group, with the function (its description's name) and alias it shifts. */
function gates(stage: StageName): Gate[] {
  const r = resourcesOf(stage);
  return Object.values(r)
    .filter((x) => x.Type === 'AWS::Lambda::Alias')
    .flatMap((alias) => {
      const fn = String(r[alias.Properties.FunctionName.Ref]!.Properties.Description).split(': ').pop()!;
      const group = r[alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!;
      return (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map(({ Name }) => ({
        fn,
        alarmId: Name.Ref,
        alarm: r[Name.Ref]!.Properties,
        alias: alias.Properties,
      }));
    });
}

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

/** One minute of a function's traffic during a shift. */
interface Minute {
  readonly invocations: number;
  /** The new version's share of invocations (CodeDeploy's weight: 0.1 in a canary). */
  readonly weight: number;
  /** Share of every invocation, either version's, that throws (the authorizer: forged or unknown tokens denied). */
  readonly sharedThrows?: number;
  /** Share of every invocation, either version's, answered 500 internal_error (a dependency's bad minute). */
  readonly sharedInternal?: number;
  /** The new version alone: share of its invocations that throw / answer 500. */
  readonly newThrows?: number;
  readonly newInternal?: number;
}

/** What Lambda (Invocations, Errors) and the function (InternalError) publish for that minute, per version. */
function datapoints(m: Minute): Record<string, number> {
  const nInv = m.weight * m.invocations;
  const oInv = m.invocations - nInv;
  const nErr = nInv * Math.min(1, (m.sharedThrows ?? 0) + (m.newThrows ?? 0));
  const nInt = nInv * Math.min(1, (m.sharedInternal ?? 0) + (m.newInternal ?? 0));
  return {
    newInvocations: nInv,
    newErrors: nErr,
    newInternalError: nInt,
    allInvocations: m.invocations,
    allErrors: nErr + oInv * (m.sharedThrows ?? 0),
    allInternalError: nInt + oInv * (m.sharedInternal ?? 0),
  };
}

/** Does the gate go to ALARM when every minute of its evaluation periods looks like `m`? */
function breaches(g: Gate, m: Minute): boolean {
  const values = datapoints(m);
  const metrics = g.alarm.Metrics as any[];
  const ids = Object.fromEntries(
    metrics
      .filter((q) => q.MetricStat)
      .map((q) => {
        const metric = q.MetricStat.Metric;
        const dims = dimsOf(metric);
        const which = 'ExecutedVersion' in dims || VERSION_DIMENSION in dims ? 'new' : 'all';
        return [q.Id, values[`${which}${metric.MetricName}`]];
      }),
  );
  const value = evaluateAt(metrics.find((q) => q.ReturnData !== false).Expression, ids);
  expect(g.alarm.DatapointsToAlarm ?? g.alarm.EvaluationPeriods).toBe(g.alarm.EvaluationPeriods);
  expect(g.alarm.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
  expect(g.alarm.TreatMissingData).toBe('notBreaching');
  return value !== undefined && value >= g.alarm.Threshold;
}

const CANARY = 0.1;
/** Floods: whatever a caller sends reaches both versions alike (CodeDeploy's weights pick at random). */
const FLOODS: readonly (readonly [string, Minute])[] = [
  ['a quiet canary', { invocations: 20, weight: CANARY }],
  // The authorizer: 30,000 forged tokens a minute beside 2,000 customers' cache misses, every one denied by a throw.
  ['a flood of forged tokens', { invocations: 32_000, weight: CANARY, sharedThrows: 30 / 32 }],
  ['a flood once the shift is complete', { invocations: 32_000, weight: 1, sharedThrows: 30 / 32 }],
  // An operation: a customer's flood with storage throttled: some timeouts and 500s on both versions.
  [
    'a customer flood failing on both versions',
    { invocations: 30_000, weight: CANARY, sharedThrows: 0.02, sharedInternal: 0.05 },
  ],
];
/** Failing versions: what the new version does wrong on its own. */
const FAILING: readonly (readonly [string, Minute])[] = [
  ['a version that throws on half its invocations', { invocations: 2_000, weight: CANARY, newThrows: 0.5 }],
  [
    // Half the invocations forged: under a flood of 15 forged tokens to one customer's the authorizer's shares differ
    // by less than production's 10 points, and a bad authorizer version waits for the flood to end to be caught.
    'a version that throws on every invocation while half are forged tokens',
    { invocations: 4_000, weight: CANARY, sharedThrows: 0.5, newThrows: 1 },
  ],
];
/** Operations only: a handler bug is a 500 answer, not a Lambda error. */
const FAILING_OPERATION: readonly (readonly [string, Minute])[] = [
  ['a version that answers 500 to a third of its requests', { invocations: 2_000, weight: CANARY, newInternal: 1 / 3 }],
  [
    'a version that answers 500 to a third during a customer flood',
    { invocations: 30_000, weight: CANARY, sharedThrows: 0.02, sharedInternal: 0.05, newInternal: 1 / 3 },
  ],
];

describe.each(STAGE_NAMES)('stage %s: each gate played on a canary', (stage) => {
  const all = () => gates(stage);
  it.each(FLOODS)('%s: no gate trips', (_what, minute) => {
    expect(
      all()
        .filter((g) => breaches(g, minute))
        .map((g) => g.alarmId),
    ).toEqual([]);
  });
  it.each(FAILING)('%s: every gate trips', (_what, minute) => {
    expect(
      all()
        .filter((g) => !breaches(g, minute))
        .map((g) => g.alarmId),
    ).toEqual([]);
  });
  it.each(FAILING_OPERATION)('%s: every operation’s gate trips', (_what, minute) => {
    const ops = all().filter((g) => g.fn !== AUTHORIZER.name);
    expect(ops.length).toBeGreaterThan(0);
    expect(ops.filter((g) => !breaches(g, minute)).map((g) => g.alarmId)).toEqual([]);
  });
});
