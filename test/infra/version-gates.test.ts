/**
 * Every deploy gate of both stages, as CloudFormation will create it, reads only its own function's metrics, and
 * among them that function's new version (the one the template points the alias at): nothing anyone else's traffic
 * moves (the gateway's 5XXError or Count, another function). What its metric math does on randomly routed canaries
 * (floods, noise, an outsider's known 500, failing versions) is gate-simulation.test.ts's. Bundling is skipped, as
 * in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { VERSION_DIMENSION } from '../../lib/constructs/version-gates.ts';
import { deployGates, synthesizeStages, type DeployGate } from './stack-fixture.ts';

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
