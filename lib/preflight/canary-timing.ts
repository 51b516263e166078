/**
 * Whether a gradual deploy's gate alarms can fire, with a margin, before the new version takes all the traffic.
 * CodeDeploy watches a deployment group's alarms only while it shifts: an alarm that can first reach ALARM after the
 * shift ended never rolls anything back. An alarm needs `DatapointsToAlarm` (else `EvaluationPeriods`) breaching
 * periods, plus the period the shift starts in (partly old traffic): its earliest firing. Then CloudWatch's delay,
 * as documented: Lambda and API Gateway send a minute's datapoint at the end of it, in 1-minute intervals, and an
 * alarm is evaluated once a minute. A canary that ends exactly then leaves a late datapoint no time: the shift must
 * outlast the earliest firing plus that delay by at least one more evaluation (GATE_MARGIN_SECONDS).
 */
import { resourcesOfType, type CfnResource, type CfnTemplate } from './template.ts';

export const CLOUDWATCH_LAG_SECONDS = 120;

/** What the shift must last beyond a gate's earliest firing and CloudWatch's delay: one more alarm evaluation. */
export const GATE_MARGIN_SECONDS = 60;

/** Seconds the new version serves before it takes all the traffic, from a Lambda deployment config; 0 = at once. */
export function shiftSeconds(template: CfnTemplate, configName: unknown): number {
  if (typeof configName === 'string') {
    const canary = /^CodeDeployDefault\.LambdaCanary\d+Percent(\d+)Minutes?$/.exec(configName);
    if (canary) return Number(canary[1]) * 60;
    const linear = /^CodeDeployDefault\.LambdaLinear(\d+)PercentEvery(\d+)Minutes?$/.exec(configName);
    if (linear) return (Math.ceil(100 / Number(linear[1])) - 1) * Number(linear[2]) * 60;
    if (configName === 'CodeDeployDefault.LambdaAllAtOnce') return 0;
    throw new Error(`unknown deployment config ${configName}`);
  }
  const ref = (configName as { Ref?: string } | undefined)?.Ref;
  const routing = ref ? (template.Resources[ref]?.Properties?.TrafficRoutingConfig as any) : undefined;
  if (!routing) throw new Error(`deployment config ${JSON.stringify(configName)} is not in the template`);
  if (routing.Type === 'TimeBasedCanary') return routing.TimeBasedCanary.CanaryInterval * 60;
  if (routing.Type === 'TimeBasedLinear')
    return (
      (Math.ceil(100 / routing.TimeBasedLinear.LinearPercentage) - 1) * routing.TimeBasedLinear.LinearInterval * 60
    );
  return 0;
}

/** A config's shape as CodeDeploy holds it (TrafficRoutingConfig), the percentages in the first step. */
export interface TrafficRoutingShape {
  readonly type: string;
  readonly canaryPercentage?: number;
  readonly linearPercentage?: number;
}

/**
 * The new version's least share of the alias's invocations while the shift runs (0 to 1): a canary's percentage,
 * or a linear config's first step (each step adds as much); 1 all at once. The deploy gates' bound never takes the
 * new version's share below it (lib/constructs/version-gates.ts).
 */
export function routingWeight(routing: TrafficRoutingShape): number {
  if (routing.type === 'TimeBasedCanary') return Number(routing.canaryPercentage) / 100;
  if (routing.type === 'TimeBasedLinear') return Number(routing.linearPercentage) / 100;
  if (routing.type === 'AllAtOnce') return 1;
  throw new Error(`unknown traffic routing ${routing.type}`);
}

/** routingWeight of a predefined Lambda deployment config, by its name. */
export function configNameWeight(configName: string): number {
  const canary = /^CodeDeployDefault\.LambdaCanary(\d+)Percent\d+Minutes?$/.exec(configName);
  if (canary) return routingWeight({ type: 'TimeBasedCanary', canaryPercentage: Number(canary[1]) });
  const linear = /^CodeDeployDefault\.LambdaLinear(\d+)PercentEvery\d+Minutes?$/.exec(configName);
  if (linear) return routingWeight({ type: 'TimeBasedLinear', linearPercentage: Number(linear[1]) });
  if (configName === 'CodeDeployDefault.LambdaAllAtOnce') return 1;
  throw new Error(`unknown deployment config ${configName}`);
}

/** routingWeight of a deployment group's config in a template: a predefined name, or a Ref to the stack's own. */
export function shiftWeight(template: CfnTemplate, configName: unknown): number {
  if (typeof configName === 'string') return configNameWeight(configName);
  const ref = (configName as { Ref?: string } | undefined)?.Ref;
  const routing = ref ? (template.Resources[ref]?.Properties?.TrafficRoutingConfig as any) : undefined;
  if (!routing) throw new Error(`deployment config ${JSON.stringify(configName)} is not in the template`);
  return routingWeight({
    type: routing.Type,
    canaryPercentage: routing.TimeBasedCanary?.CanaryPercentage,
    linearPercentage: routing.TimeBasedLinear?.LinearPercentage,
  });
}

/** The alarm's period in seconds: its own, or its metric math's (every metric of a gate has the same period). */
function periodOf(alarm: CfnResource): number {
  const p = alarm.Properties ?? {};
  if (typeof p.Period === 'number') return p.Period;
  const periods = ((p.Metrics as any[]) ?? []).map((m) => m.Period ?? m.MetricStat?.Period).filter(Number.isFinite);
  return Math.max(...periods);
}

/** Seconds from the start of a shift until the alarm can first be in ALARM for it. */
export function secondsToFire(alarm: CfnResource): number {
  const p = alarm.Properties ?? {};
  const datapoints = Number(p.DatapointsToAlarm ?? p.EvaluationPeriods);
  return (datapoints + 1) * periodOf(alarm) + CLOUDWATCH_LAG_SECONDS;
}

export interface GateTiming {
  readonly group: string;
  readonly alarm: string;
  readonly shiftSeconds: number;
  readonly secondsToFire: number;
}

/** Every (deployment group, gate alarm) pair of an enabled alarm configuration, with both durations. */
export function gateTimings(template: CfnTemplate): GateTiming[] {
  return resourcesOfType(template, 'AWS::CodeDeploy::DeploymentGroup').flatMap(([group, g]) => {
    const config = g.Properties?.AlarmConfiguration as { Enabled?: boolean; Alarms?: { Name: any }[] } | undefined;
    if (!config?.Enabled) return [];
    const shift = shiftSeconds(template, g.Properties?.DeploymentConfigName);
    return (config.Alarms ?? []).map(({ Name }) => {
      const alarm = template.Resources[Name?.Ref];
      if (!alarm) throw new Error(`${group}: gate alarm ${JSON.stringify(Name)} is not in the template`);
      return { group, alarm: Name.Ref as string, shiftSeconds: shift, secondsToFire: secondsToFire(alarm) };
    });
  });
}

/** One line per gate that cannot fire, with the margin, before its shift ends. */
export function gatesThatCannotFire(template: CfnTemplate): string[] {
  return gateTimings(template)
    .filter((t) => t.shiftSeconds < t.secondsToFire + GATE_MARGIN_SECONDS)
    .map(
      (t) =>
        `canary: ${t.group} shifts all traffic after ${t.shiftSeconds} s but its gate ${t.alarm} can fire only after ${t.secondsToFire} s (datapoints, the starting period and CloudWatch's ${CLOUDWATCH_LAG_SECONDS} s delay), and the shift must outlast that by ${GATE_MARGIN_SECONDS} s: lengthen the canary`,
    );
}
