/**
 * Every stage's canary outlasts each of its gates' earliest firing plus CloudWatch's documented delay, with a
 * margin of one more alarm evaluation: a gate that could first fire exactly as the shift completes (the 5-minute
 * canary against a 2-datapoint gate) rolls nothing back when one datapoint comes late.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, expect, it } from 'vitest';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import {
  CLOUDWATCH_LAG_SECONDS,
  GATE_MARGIN_SECONDS,
  gateTimings,
  gatesThatCannotFire,
} from '../../lib/preflight/canary-timing.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

const templates = {} as Record<StageName, CfnTemplate>;
beforeAll(() => {
  const { stacks } = createApp({ context: { ...SYNTH_CONTEXT } });
  for (const stage of STAGE_NAMES) templates[stage] = Template.fromStack(stacks[stage]).toJSON() as CfnTemplate;
}, 240_000);

it.each(STAGE_NAMES)("%s: every gate fires, with the margin, before its function's shift completes", (stage) => {
  const timings = gateTimings(templates[stage]);
  // Every function's group is gated, and on more than one alarm.
  expect(new Set(timings.map((t) => t.group)).size).toBeGreaterThanOrEqual(5);
  for (const t of timings) {
    expect(t.secondsToFire, t.alarm).toBeGreaterThan(CLOUDWATCH_LAG_SECONDS);
    expect(t.shiftSeconds - t.secondsToFire, `${t.group} ${t.alarm}`).toBeGreaterThanOrEqual(GATE_MARGIN_SECONDS);
  }
  expect(gatesThatCannotFire(templates[stage])).toEqual([]);
});

it('refuses a canary that ends just as a gate could first fire, naming the gate', () => {
  const t = structuredClone(templates.staging) as any;
  const groups = Object.values<any>(t.Resources).filter((r) => r.Type === 'AWS::CodeDeploy::DeploymentGroup');
  for (const g of groups) g.Properties.DeploymentConfigName = 'CodeDeployDefault.LambdaCanary10Percent5Minutes';
  // The 2-datapoint gates first fire 300 s into the shift: exactly when a 5-minute canary ends.
  expect(Math.max(...gateTimings(t).map((x) => x.secondsToFire))).toBe(300);
  const lines = gatesThatCannotFire(t);
  expect(lines.length).toBeGreaterThan(0);
  expect(lines[0]).toMatch(/shifts all traffic after 300 s but its gate \S+ can fire only after 300 s .* by 60 s/);
  // A gate that could fire only after the shift: refused at any margin.
  for (const g of groups) g.Properties.DeploymentConfigName = 'CodeDeployDefault.LambdaAllAtOnce';
  expect(gatesThatCannotFire(t).length).toBe(gateTimings(t).length);
});
