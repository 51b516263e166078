/**
 * The authorizer's deploy gate reads exactly Lambda's own counts of its alias and of the version this template
 * deploys: Invocations and Errors (a denial is a thrown "Unauthorized", a failure another throw), under the exact
 * dimension sets Lambda publishes for invocations through an alias. What its math does on randomly routed canaries
 * (a flood of forged tokens, an outsider's failing token, a version denying valid keys) is
 * gate-simulation.test.ts's. Bundling is skipped, as in stack.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { GATE_FLOOR_SIGMAS, GATE_MARGIN } from '../../lib/constructs/version-gates.ts';
import { shiftWeight } from '../../lib/preflight/canary-timing.ts';
import { resourcesOf, synthesizeStages } from './stack-fixture.ts';

synthesizeStages();

describe.each(STAGE_NAMES)('stage %s: the authorizer deploy gate', (stage) => {
  const r = () => resourcesOf(stage);
  /** The gate alarm of the authorizer's deployment group. */
  const gate = () => {
    const alias = Object.values(r()).find(
      (x) =>
        x.Type === 'AWS::Lambda::Alias' &&
        String(r()[x.Properties.FunctionName.Ref]!.Properties.Description).endsWith(`: ${AUTHORIZER.name}`),
    )!;
    const group = r()[alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!;
    const alarms = (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map((a) => a.Name.Ref);
    expect(alarms).toHaveLength(1);
    return { alias, alarm: r()[alarms[0]!]!.Properties };
  };

  it('reads Invocations and Errors of the alias and of the version this template deploys', () => {
    const { alias, alarm } = gate();
    const fn = alias.Properties.FunctionName;
    const read: string[] = [];
    for (const q of alarm.Metrics as any[]) {
      if (!q.MetricStat) continue;
      const m = q.MetricStat.Metric;
      expect(m.Namespace, q.Id).toBe('AWS/Lambda');
      const dims = Object.fromEntries(
        (m.Dimensions as { Name: string; Value: unknown }[]).map((d) => [d.Name, d.Value]),
      );
      // Lambda's dimension sets for an alias: FunctionName and Resource "<function>:<alias>", plus ExecutedVersion
      // for the version that ran; the new version is the one this template points the alias at.
      expect(dims.FunctionName, q.Id).toEqual(fn);
      expect(dims.Resource, q.Id).toEqual({ 'Fn::Join': ['', [fn, `:${alias.Properties.Name}`]] });
      if ('ExecutedVersion' in dims) expect(dims.ExecutedVersion, q.Id).toEqual(alias.Properties.FunctionVersion);
      expect(Object.keys(dims).length, q.Id).toBe('ExecutedVersion' in dims ? 3 : 2);
      read.push(`${'ExecutedVersion' in dims ? 'new' : 'all'}${m.MetricName}`);
    }
    expect(read.sort()).toEqual(['allErrors', 'allInvocations', 'newErrors', 'newInvocations']);
    expect(alarm.Threshold).toBe(GATE_MARGIN);
    // The new version's share is floored at its group's canary weight (less routing's noise): a bucket the shift
    // starts in late, diluted by the old version's traffic before it, is judged at the canary's weight.
    const group = r()[alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!;
    const weight = shiftWeight({ Resources: r() } as never, group.Properties.DeploymentConfigName);
    const expression = (alarm.Metrics as any[]).find((q) => q.ReturnData !== false).Expression as string;
    expect(expression).toContain(`(${weight} - ${GATE_FLOOR_SIGMAS} * ((${weight} * ${1 - weight} / `);
  });
});
