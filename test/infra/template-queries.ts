/** Lookups the AWS-rules tests make in a synthesized template and in the repository's sources. */
import { readdirSync, readFileSync } from 'node:fs';
import { resourcesOf, type CfnTemplate } from './templates.ts';

export type MetricDataQuery = {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: { Metric: MetricRef };
};
export type MetricRef = { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
export const alarmsOf = (t: CfnTemplate) =>
  resourcesOf(t, 'AWS::CloudWatch::Alarm').map(([id, r]) => ({ id, p: r.Properties }));
/** Every metric an alarm reads, plain or inside its metric math. */
export const metricsOf = (p: Record<string, any>): MetricRef[] =>
  p.MetricName
    ? [{ Namespace: p.Namespace, MetricName: p.MetricName, Dimensions: p.Dimensions }]
    : (p.Metrics as MetricDataQuery[]).flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric] : []));

/** Source files under a folder (recursively), for what the code itself does. */
export const sources = (dir: string): string[] =>
  readdirSync(new URL(`../../${dir}/`, import.meta.url), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(new URL(`../../${dir}/${f}`, import.meta.url), 'utf8'));
