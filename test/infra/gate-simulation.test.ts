/**
 * Every deploy gate of both stages, played as the alarm CloudFormation creates: its own metric math from the
 * template (metric-eval.ts), fed the datapoints CloudWatch would hold for each bucket of thousands of randomly routed
 * canaries (bench/models/gate-simulation.ts: Poisson arrivals, 10 % routed to the new version request by request,
 * buckets aligned to the clock). Asserts the targets — a good release (a flood, background failures, an outsider's
 * known 500) rolled back in at most 1 % of canaries, a bad one (a steady excess of failures, every request 503,
 * an authorizer denying valid keys) in at least 99 % — prints the measured rates, and checks that the rates
 * docs/deployment.md states are these. Bundling is skipped, as in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { VERSION_DIMENSION } from '../../lib/constructs/version-gates.ts';
import { GATE_MARGIN, GATE_PERIOD_SECONDS } from '../../lib/config/deploy-gates.ts';
import {
  DEPLOY,
  GATE_CASES,
  gateExcess,
  measureCase,
  measureGates,
  meetsTarget,
  releaseFalseRollback,
  type Bucket,
} from '../../bench/models/gate-simulation.ts';
import { binomial, poisson, random } from '../../bench/models/sampling.ts';
import { shiftSeconds, shiftWeight } from '../../lib/preflight/canary-timing.ts';
import { compileExpression } from './metric-eval.ts';
import { deployGates, resourcesOf, synthesizeStages, type DeployGate } from './stack-fixture.ts';

synthesizeStages();

type Gate = DeployGate;
const gates = deployGates;

/**
 * The gate as CloudWatch evaluates it on one bucket: each query id given the datapoint its metric would have (none
 * when the count is 0 and the metric is the function's own count, which is published only when counted; Lambda
 * publishes Errors beside every invocation), the returned expression evaluated, compared with the threshold.
 */
function alarmOf(g: Gate): (b: Bucket) => number | undefined {
  const metrics = g.alarm.Metrics as any[];
  const expression = compileExpression(metrics.find((q) => q.ReturnData !== false).Expression);
  const sources = metrics
    .filter((q) => q.MetricStat)
    .map((q) => {
      const m = q.MetricStat.Metric;
      const dims = (m.Dimensions as { Name: string }[]).map((d) => d.Name);
      const which = dims.includes('ExecutedVersion') || dims.includes(VERSION_DIMENSION) ? 'new' : 'all';
      const name = m.MetricName === 'ServerError' ? 'ServerErrors' : m.MetricName;
      const field = `${which}${name}` as keyof Bucket;
      const lambda = m.Namespace === 'AWS/Lambda';
      const invocations = `${which}Invocations` as keyof Bucket;
      return { id: q.Id as string, field, lambda, invocations };
    });
  return (b) => {
    const values: Record<string, number | undefined> = {};
    for (const s of sources) {
      const v = b[s.field];
      values[s.id] = s.lambda ? (b[s.invocations] > 0 ? v : undefined) : v > 0 ? v : undefined;
    }
    return expression(values);
  };
}

/** Buckets of every shape, zeros and missing versions included, to compare the template's math with the model's. */
function sampleBuckets(count: number): Bucket[] {
  const rng = random(7);
  const out: Bucket[] = [];
  for (let i = 0; i < count; i++) {
    const all = [0, 1, 3, 10, 100, 10_000][i % 6]! + Math.floor(rng() * 50);
    // The shift's bucket too: a share far below the canary's weight, where the bound's floor decides.
    const neu = i % 11 === 0 ? all : i % 13 === 0 ? 0 : binomial(rng, all, i % 5 === 0 ? 0.02 : 0.1);
    const share = (x: number) => binomial(rng, x, [0, 0.01, 0.3, 1][Math.floor(rng() * 4)]!);
    const newErrors = share(neu);
    const newServerErrors = share(neu - newErrors);
    const oldErrors = share(all - neu);
    const oldServerErrors = share(all - neu - oldErrors);
    out.push({
      allInvocations: all,
      newInvocations: neu,
      allErrors: newErrors + oldErrors,
      newErrors,
      allServerErrors: newServerErrors + oldServerErrors,
      newServerErrors,
    });
  }
  return out;
}

describe.each(STAGE_NAMES)('stage %s: each deploy gate is the model played below', (stage) => {
  it('one gate per function, each a 1-period alarm on its metric math at the model’s period and margin', () => {
    const all = gates(stage);
    expect(all.map((g) => g.fn).sort()).toEqual([...new Set(all.map((g) => g.fn))].sort());
    for (const g of all) {
      expect(g.alarm, g.alarmId).toMatchObject({
        EvaluationPeriods: 1,
        Threshold: GATE_MARGIN,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(g.alarm.DatapointsToAlarm ?? 1, g.alarmId).toBe(1);
      for (const q of (g.alarm.Metrics as any[]).filter((m) => m.MetricStat))
        expect([q.MetricStat.Period, q.MetricStat.Stat], `${g.alarmId} ${q.Id}`).toEqual([GATE_PERIOD_SECONDS, 'Sum']);
    }
  });

  it('the canary played is the stage’s: its weight and duration, from each deployment group’s config', () => {
    const r = resourcesOf(stage);
    const groups = Object.values(r).filter((x) => x.Type === 'AWS::CodeDeploy::DeploymentGroup');
    expect(groups.length).toBeGreaterThan(1);
    for (const g of groups) {
      const config = g.Properties.DeploymentConfigName;
      expect(shiftSeconds({ Resources: r } as never, config)).toBe(DEPLOY.canarySeconds);
      expect(shiftWeight({ Resources: r } as never, config)).toBe(DEPLOY.weight);
      expect(config).toBe(
        `CodeDeployDefault.LambdaCanary${100 * DEPLOY.weight}Percent${DEPLOY.canarySeconds / 60}Minutes`,
      );
    }
  });

  it('the template’s metric math gives the model’s value on every bucket', () => {
    const buckets = sampleBuckets(3_000);
    for (const g of gates(stage)) {
      const alarm = alarmOf(g);
      // The authorizer answers nothing itself: its failures are all thrown (Lambda's Errors).
      const own = (b: Bucket) => (g.fn === AUTHORIZER.name ? { ...b, allServerErrors: 0, newServerErrors: 0 } : b);
      const differ = buckets.map(own).filter((b) => Math.abs((alarm(b) ?? Number.NaN) - gateExcess(b)) > 1e-9);
      expect(differ.slice(0, 3), g.alarmId).toEqual([]);
    }
  });
});

// The rates are only as good as the sampling: its moments, and a tail a false rollback lives in, against the exact
// distributions.
it('samples binomial and Poisson counts with their exact mean, variance and tail', () => {
  const rng = random(11);
  const draws = 40_000;
  const moments = (draw: () => number) => {
    const xs = Array.from({ length: draws }, draw);
    const mean = xs.reduce((a, b) => a + b, 0) / draws;
    return { mean, variance: xs.reduce((a, b) => a + (b - mean) ** 2, 0) / draws, xs };
  };
  for (const [n, p] of [
    [20, 0.1],
    [90_000, 0.1],
    [3_000, 0.001],
    [50, 0.97],
  ] as const) {
    const { mean, variance } = moments(() => binomial(rng, n, p));
    expect(mean / (n * p), `Bin(${n}, ${p})`).toBeCloseTo(1, 1);
    expect(variance / (n * p * (1 - p)), `Bin(${n}, ${p})`).toBeGreaterThan(0.95);
    expect(variance / (n * p * (1 - p)), `Bin(${n}, ${p})`).toBeLessThan(1.05);
  }
  for (const mean of [0.3, 4.5, 9_000]) {
    const m = moments(() => poisson(rng, mean));
    expect(m.mean / mean, `Poisson(${mean})`).toBeCloseTo(1, 1);
    expect(m.variance / mean, `Poisson(${mean})`).toBeGreaterThan(0.95);
    expect(m.variance / mean, `Poisson(${mean})`).toBeLessThan(1.05);
  }
  // P(Bin(15, 0.1) >= 6) = 0.00225: an outsider's 15 known 500s in a period, 6 of them on the new version.
  const tail = moments(() => binomial(rng, 15, 0.1)).xs.filter((x) => x >= 6).length / draws;
  expect(tail).toBeGreaterThan(0.001);
  expect(tail).toBeLessThan(0.004);
});

/** Each distinct gate expression is played once (every operation's gate has the same math on its own metrics). */
const played = new Map<string, ReturnType<typeof measureGates>>();
/** The model's rates, which the docs state. */
const modelled = new Map<string, ReturnType<typeof measureGates>>();
const model = (kind: 'operation' | 'authorizer') => {
  if (!modelled.has(kind)) modelled.set(kind, measureGates(gateExcess, kind));
  return modelled.get(kind)!;
};

describe.each(STAGE_NAMES)('stage %s: the gates played on randomly routed canaries', (stage) => {
  const kinds = ['operation', 'authorizer'] as const;
  it.each(kinds)('the %s gate meets the targets on every case a canary can show', (kind) => {
    const ofKind = gates(stage).filter((g) => (g.fn === AUTHORIZER.name) === (kind === 'authorizer'));
    expect(ofKind.length).toBeGreaterThan(0);
    const rates = ofKind.map((g) => {
      const key = `${kind}:${JSON.stringify(g.alarm.Metrics.find((q: any) => q.ReturnData !== false).Expression)}`;
      const alarm = alarmOf(g);
      if (!played.has(key))
        played.set(
          key,
          measureGates((b) => alarm(b) ?? 0, kind),
        );
      return played.get(key)!;
    });
    const lines = rates[0]!.map(
      ({ case: c, rolledBack }) =>
        `${c.release === 'good' ? 'false rollback' : 'missed bad release'} ${(100 * (c.release === 'good' ? rolledBack : 1 - rolledBack)).toFixed(2)} %${c.target ? '' : ' (beyond a canary)'}: ${c.what}`,
    );
    console.log(`${stage}, ${kind} gate (${GATE_CASES.length} cases, all kinds):\n  ${lines.join('\n  ')}`);
    for (const r of rates) {
      const missed = r.filter(({ case: c, rolledBack }) => c.target && !meetsTarget(c, rolledBack));
      expect(missed.map(({ case: c, rolledBack }) => `${c.what}: ${rolledBack}`)).toEqual([]);
      // What the docs state (bench/models/gate-simulation.ts's formula) is what the template's math measured.
      expect(r).toEqual(model(kind));
    }
  });
});

// A release rolls back when any of its functions' gates fires: the targets hold for the release, not only per gate.
it('a release of every function is rolled back by noise in at most 1 %, every gate at its worst good case at once', () => {
  const release = releaseFalseRollback([...model('operation'), ...model('authorizer')]);
  console.log(`a release of ${release.functions} functions: rolled back in ${(100 * release.rolledBack).toFixed(2)} %`);
  expect(release.rolledBack).toBeLessThanOrEqual(0.01);
});

/**
 * What each of the two changes holds off, played on the model with the cases they are for: the functions counting
 * the check's direct invocations in the gates' ServerError (as before they told the alias apart), and a bound that
 * takes the bucket's share as it is (weight 0: no floor).
 */
describe('without either change, good releases roll back', () => {
  const CANARIES = 2_000;
  const rate = (c: (typeof GATE_CASES)[number], weight: number, checkCounted: boolean) =>
    measureCase(c, (b) => gateExcess(b, weight), { checkCounted, canaries: CANARIES });
  const report = (label: string, rows: { c: (typeof GATE_CASES)[number]; r: number }[]) =>
    console.log(`${label}:\n  ${rows.map(({ c, r }) => `${(100 * r).toFixed(2)} %: ${c.what}`).join('\n  ')}`);

  it('the check’s failures counted as the new version’s, with no share before the shift: the check’s cases fail', () => {
    const rows = GATE_CASES.filter((c) => c.check && c.release === 'good').map((c) => ({
      c,
      r: rate(c, 0, true),
      now: rate(c, DEPLOY.weight, false),
    }));
    report('the check counted, no floor (before)', rows);
    expect(rows.filter(({ c, r }) => !meetsTarget(c, r)).length).toBeGreaterThan(0);
    // The floor alone does not make up for counting them.
    expect(Math.max(...rows.map(({ c }) => rate(c, DEPLOY.weight, true)))).toBeGreaterThan(0.01);
    expect(rows.filter(({ c, now }) => !meetsTarget(c, now))).toEqual([]);
  });

  it('no floor under the share: an outsider’s burst at the end of the shift’s bucket fails the target', () => {
    const rows = GATE_CASES.filter((c) => c.burst).map((c) => ({ c, r: rate(c, 0, false) }));
    report('bursts, no floor', rows);
    expect(rows.every(({ c, r }) => !meetsTarget(c, r))).toBe(true);
  });
});
