/**
 * Every stage's canary outlasts each of its gates' earliest firing plus CloudWatch's documented delay, with a
 * margin of one more alarm evaluation: a gate that could first fire exactly as the shift completes (the 5-minute
 * canary against a 2-datapoint gate) rolls nothing back when one datapoint comes late.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, expect, it } from 'vitest';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import {
  CLOUDWATCH_LAG_SECONDS,
  GATE_MARGIN_SECONDS,
  gateTimings,
  gatesThatCannotFire,
} from '../../lib/preflight/canary-timing.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { sharedTemplateJson } from './shared-synth.ts';

const templates = {} as Record<StageName, CfnTemplate>;
beforeAll(() => {
  for (const stage of STAGE_NAMES) templates[stage] = sharedTemplateJson(stage) as CfnTemplate;
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
  // The gates judge 3-minute buckets: the one the shift starts in, a full one, then CloudWatch's delay: 480 s, long
  // after a 5-minute canary ends.
  expect(Math.max(...gateTimings(t).map((x) => x.secondsToFire))).toBe(2 * 180 + CLOUDWATCH_LAG_SECONDS);
  const lines = gatesThatCannotFire(t);
  expect(lines.length).toBe(gateTimings(t).length);
  expect(lines[0]).toMatch(/shifts all traffic after 300 s but its gate \S+ can fire only after 480 s .* by 60 s/);
  // A gate that could fire only after the shift: refused at any margin.
  for (const g of groups) g.Properties.DeploymentConfigName = 'CodeDeployDefault.LambdaAllAtOnce';
  expect(gatesThatCannotFire(t).length).toBe(gateTimings(t).length);
});

/** The gate table of docs/deployment.md ("Deploy gates"): logical-id pattern, "Fires when", "Gates". */
function gateRows(): { pattern: RegExp; firesWhen: string; gates: string }[] {
  const docs = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
  const table = docs.slice(docs.indexOf('| Alarm (logical id) | Fires when | Gates |'));
  const lines = table.split('\n');
  return lines.slice(2, lines.indexOf('')).map((l) => {
    const [id, firesWhen, gates] = l.split(' | ').map((c) => c.replace(/^\| /, '').replace(/ \|$/, ''));
    const name = id!.replace(/`/g, '');
    const source = name
      .split(/(<operation>|…)/)
      .map((p) => (p === '<operation>' ? '([A-Za-z]+)' : p === '…' ? '[A-Z0-9]*' : p))
      .join('');
    return { pattern: new RegExp(`^${source}$`), firesWhen: firesWhen!, gates: gates! };
  });
}

it.each(STAGE_NAMES)("%s: the docs' gate rows say each gate alarm's datapoints and which groups it gates", (stage) => {
  const rows = gateRows();
  // One row per kind of gate: an operation's failures and the authorizer's denials (no gate reads an API-wide
  // metric, which anyone's traffic moves).
  expect(rows.length).toBeGreaterThanOrEqual(2);
  const timings = gateTimings(templates[stage]);
  const groups = new Set(timings.map((t) => t.group));
  for (const alarm of new Set(timings.map((t) => t.alarm))) {
    const matching = rows.filter((r) => r.pattern.test(alarm));
    expect(matching, `one row of the gate table for ${alarm}`).toHaveLength(1);
    const row = matching[0]!;
    const p = templates[stage].Resources[alarm]!.Properties!;
    const datapoints = Number(p.DatapointsToAlarm ?? p.EvaluationPeriods);
    const minutes =
      Math.max(...((p.Metrics as any[]) ?? []).map((m) => m.MetricStat?.Period ?? 0), Number(p.Period ?? 0)) / 60;
    const period = minutes === 1 ? 'minute' : `${minutes}-minute period`;
    expect(row.firesWhen, alarm).toMatch(
      datapoints === 1 ? new RegExp(`in a ${period}`) : new RegExp(`in ${datapoints} consecutive ${period}s`),
    );
    const gated = timings.filter((t) => t.alarm === alarm).map((t) => t.group);
    if (row.gates === 'every function') expect(new Set(gated), alarm).toEqual(groups);
    else expect(gated, alarm).toHaveLength(1);
  }
});
