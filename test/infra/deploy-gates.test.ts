/**
 * The authorizer's deploy gate, played on minutes of traffic: the alarm's metric math from the template evaluated
 * (metric-eval.ts) on the datapoints Lambda would publish for the alias and for its new version during a canary,
 * then compared with the alarm's threshold for its 2 of 2 minutes. Anonymous traffic (forged tokens, which both
 * versions deny) must never breach it, so nobody outside can roll a release back; a version that denies valid keys
 * or fails must. Bundling is skipped, as in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { evaluateAt } from './metric-eval.ts';
import { resourcesOf, synthesizeStages } from './stack-fixture.ts';

synthesizeStages();

/** One minute of the authorizer's invocations (cache misses) during a shift. */
interface Minute {
  /** Invocations with a valid key. */
  readonly valid: number;
  /** Invocations with a forged or unknown token: denied by either version. */
  readonly forged: number;
  /** The new version's share of invocations (CodeDeploy's weight: 0.1 in a canary, 1 once shifted). */
  readonly weight: number;
  /** The new version denies valid keys too. */
  readonly deniesValidKeys?: boolean;
  /** The share of the new version's valid-key invocations that fail (throw another error). */
  readonly failing?: number;
}

/** What Lambda publishes for that minute: Invocations and Errors (a denial is a thrown error) per version. */
function datapoints(m: Minute) {
  const total = m.valid + m.forged;
  const newInvocations = m.weight * total;
  const newValidErrors = m.weight * m.valid * (m.deniesValidKeys ? 1 : (m.failing ?? 0));
  const newErrors = m.weight * m.forged + newValidErrors;
  const oldErrors = (1 - m.weight) * m.forged;
  return {
    newInvocations,
    newErrors,
    allInvocations: total,
    allErrors: newErrors + oldErrors,
    // The function's own count of denials (no version): what the gate used to divide by the alias's invocations.
    denied: m.forged + (m.deniesValidKeys ? m.weight * m.valid : 0),
  };
}

const CANARY = 0.1;
const SCENARIOS: readonly (readonly [string, 'breaches' | 'holds', Minute])[] = [
  ['a quiet canary', 'holds', { valid: 2_000, forged: 20, weight: CANARY }],
  ['a flood of forged tokens', 'holds', { valid: 2_000, forged: 30_000, weight: CANARY }],
  ['a flood of forged tokens with few customers', 'holds', { valid: 100, forged: 10_000, weight: CANARY }],
  ['a flood once the shift is complete', 'holds', { valid: 2_000, forged: 30_000, weight: 1 }],
  ['a version that denies valid keys', 'breaches', { valid: 2_000, forged: 20, weight: CANARY, deniesValidKeys: true }],
  [
    'a version that denies valid keys during a flood',
    'breaches',
    { valid: 2_000, forged: 2_000, weight: CANARY, deniesValidKeys: true },
  ],
  ['a version that fails half its lookups', 'breaches', { valid: 2_000, forged: 20, weight: CANARY, failing: 0.5 }],
];

describe.each(STAGE_NAMES)('stage %s: the authorizer deploy gate', (stage) => {
  const r = () => resourcesOf(stage);
  /** The gate alarm of the authorizer's deployment group that is not the API 5xx rate. */
  const gate = () => {
    const [aliasId, alias] = Object.entries(r()).find(
      ([, x]) =>
        x.Type === 'AWS::Lambda::Alias' &&
        String(r()[x.Properties.FunctionName.Ref]!.Properties.Description).endsWith(`: ${AUTHORIZER.name}`),
    )!;
    const group = r()[alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!;
    const alarms = (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map((a) => a.Name.Ref);
    const id = alarms.find((a) => a.includes('DenialRate'))!;
    return { aliasId, alias, alarm: r()[id]!.Properties };
  };

  /** Each query id of the gate's math → which datapoint it reads, after checking its metric and dimensions. */
  const sources = (): Record<string, keyof ReturnType<typeof datapoints>> => {
    const { alias, alarm } = gate();
    const fn = alias.Properties.FunctionName;
    const out: Record<string, keyof ReturnType<typeof datapoints>> = {};
    for (const q of alarm.Metrics as any[]) {
      if (!q.MetricStat) continue;
      const m = q.MetricStat.Metric;
      expect(q.MetricStat.Period, q.Id).toBe(60);
      expect(q.MetricStat.Stat, q.Id).toBe('Sum');
      if (m.Namespace !== 'AWS/Lambda') {
        expect(m.MetricName, q.Id).toBe('AuthorizerDenied');
        out[q.Id] = 'denied';
        continue;
      }
      const dims = Object.fromEntries(
        (m.Dimensions as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]),
      );
      // Lambda's dimension sets for an alias: FunctionName and Resource "<function>:<alias>", plus ExecutedVersion
      // for the version that ran; the new version is the one this template points the alias at.
      expect(dims.FunctionName, q.Id).toEqual(fn);
      expect(dims.Resource, q.Id).toEqual({ 'Fn::Join': ['', [fn, `:${alias.Properties.Name}`]] });
      if ('ExecutedVersion' in dims) expect(dims.ExecutedVersion, q.Id).toEqual(alias.Properties.FunctionVersion);
      expect(Object.keys(dims).length, q.Id).toBe('ExecutedVersion' in dims ? 3 : 2);
      const which = 'ExecutedVersion' in dims ? 'new' : 'all';
      expect(['Invocations', 'Errors'], q.Id).toContain(m.MetricName);
      out[q.Id] = `${which}${m.MetricName}` as keyof ReturnType<typeof datapoints>;
    }
    return out;
  };

  /** Does a shift with `minute` for 2 consecutive minutes put the gate in ALARM? */
  const breaches = (minute: Minute): boolean => {
    const { alarm } = gate();
    expect(alarm).toMatchObject({
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    const values = datapoints(minute);
    const ids = Object.fromEntries(Object.entries(sources()).map(([id, from]) => [id, values[from]]));
    const returned = (alarm.Metrics as any[]).find((q) => q.ReturnData !== false);
    const value = evaluateAt(returned.Expression, ids);
    return value !== undefined && value >= alarm.Threshold;
  };

  it('reads Invocations and Errors of the alias and of the version this template deploys', () => {
    expect(Object.values(sources()).sort()).toEqual(['allErrors', 'allInvocations', 'newErrors', 'newInvocations']);
    expect(gate().alarm.Threshold).toBe(STAGES[stage].alarms.authorizerDenialRatePercent);
  });

  it.each(SCENARIOS)('%s: the gate %s', (_what, expected, minute) => {
    expect(breaches(minute) ? 'breaches' : 'holds').toBe(expected);
  });
});
