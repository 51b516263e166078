/**
 * The Lambda entry of the bake (lib/constructs/bake-hook.ts deploys it): the bake's ports over the AWS SDK. It
 * reads the deployment (codedeploy:GetDeployment), the versions' counts (cloudwatch:GetMetricData), invokes itself
 * asynchronously to continue past Lambda's 15 minutes (lambda:InvokeFunction on its own ARN), and reports
 * (codedeploy:PutLifecycleEventHookExecutionStatus); its role allows exactly that.
 */
import {
  CloudWatchClient,
  GetMetricDataCommand,
  type MetricDataQuery,
  type MetricDataResult,
} from '@aws-sdk/client-cloudwatch';
import { deploymentOf, reportHook } from './codedeploy.ts';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { bakeEventSchema, bakeHook, type BakeConfig, type CountWindow, type MinuteCounts } from './bake.ts';

const configSchema = z.object({
  /** [function name, operationId] of each function the bake judges. */
  functions: z.array(z.tuple([z.string().min(1), z.string().min(1)])),
  /** The functions' custom metrics: their namespace and default dimensions (service, stage). */
  namespace: z.string().min(1),
  dimensions: z.record(z.string(), z.string()),
});

/** The bake's configuration, from the environment the construct writes (BAKE_CONFIG: JSON). */
export function configOf(
  env: Readonly<Record<string, string | undefined>>,
): BakeConfig & { namespace: string; dimensions: Record<string, string> } {
  const raw = env.BAKE_CONFIG;
  if (!raw) throw new Error('BAKE_CONFIG is not set');
  const c = configSchema.parse(JSON.parse(raw));
  return { functions: Object.fromEntries(c.functions), namespace: c.namespace, dimensions: c.dimensions };
}

/** The dimension the functions' per-version ServerError carries (lib/constructs/version-gates.ts VERSION_DIMENSION). */
const VERSION_DIMENSION = 'version';

/** The three counts of a version (or of every version) run through the alias: invocations, Lambda errors, own 5xx. */
export function countQueries(
  w: CountWindow,
  custom: { namespace: string; dimensions: Record<string, string> },
): MetricDataQuery[] {
  const lambda = (metricName: string) => ({
    Namespace: 'AWS/Lambda',
    MetricName: metricName,
    Dimensions: [
      { Name: 'FunctionName', Value: w.functionName },
      { Name: 'Resource', Value: `${w.functionName}:${w.alias}` },
      ...(w.version === undefined ? [] : [{ Name: 'ExecutedVersion', Value: w.version }]),
    ],
  });
  const serverErrors = {
    Namespace: custom.namespace,
    MetricName: 'ServerError',
    Dimensions: Object.entries({
      ...custom.dimensions,
      operation: w.operation,
      ...(w.version === undefined ? {} : { [VERSION_DIMENSION]: w.version }),
    }).map(([Name, Value]) => ({ Name, Value })),
  };
  const stat = (Id: string, Metric: object): MetricDataQuery => ({
    Id,
    MetricStat: { Metric, Period: 60, Stat: 'Sum' },
    ReturnData: true,
  });
  return [
    stat('invocations', lambda('Invocations')),
    stat('errors', lambda('Errors')),
    stat('serverErrors', serverErrors),
  ];
}

const cloudWatch = new CloudWatchClient({});
const lambda = new LambdaClient({});

/**
 * The per-minute counts in GetMetricData's results (one page or several): invocations are the requests, Lambda's
 * errors and the function's ServerError the failures. Throws when CloudWatch could not read a query.
 */
export function minutesOf(results: readonly MetricDataResult[]): MinuteCounts[] {
  const byMinute = new Map<number, { requests: number; failures: number }>();
  for (const result of results) {
    if (result.StatusCode === 'Forbidden' || result.StatusCode === 'InternalError')
      throw new Error(`CloudWatch could not read ${result.Id}: ${result.StatusCode}`);
    (result.Timestamps ?? []).forEach((at, i) => {
      const start = at.getTime();
      const row = byMinute.get(start) ?? { requests: 0, failures: 0 };
      const value = result.Values?.[i] ?? 0;
      if (result.Id === 'invocations') row.requests += value;
      else row.failures += value;
      byMinute.set(start, row);
    });
  }
  return [...byMinute].map(([start, c]) => ({ start, ...c })).sort((a, b) => a.start - b.start);
}

async function counts(
  w: CountWindow,
  custom: { namespace: string; dimensions: Record<string, string> },
): Promise<MinuteCounts[]> {
  const results: MetricDataResult[] = [];
  let token: string | undefined;
  do {
    const r = await cloudWatch.send(
      new GetMetricDataCommand({
        MetricDataQueries: countQueries(w, custom),
        StartTime: new Date(w.from),
        EndTime: new Date(w.to),
        ...(token ? { NextToken: token } : {}),
      }),
    );
    results.push(...(r.MetricDataResults ?? []));
    token = r.NextToken;
  } while (token);
  return minutesOf(results);
}

export const handler = async (raw: unknown) => {
  // The one configuration read of this entry: the hook is no API function and has no Runtime (shared/runtime.ts).
  // eslint-disable-next-line no-restricted-properties
  const env = process.env;
  const config = configOf(env);
  const self = env.AWS_LAMBDA_FUNCTION_NAME;
  const event = bakeEventSchema.parse(raw);
  return bakeHook(
    event,
    {
      async deployment(deploymentId) {
        const { appSpec, createdAt } = await deploymentOf(deploymentId);
        if (createdAt === undefined) throw new Error(`deployment ${deploymentId} has no creation time`);
        return { appSpec, createdAt };
      },
      counts: (w) => counts(w, config),
      report: reportHook,
      async continueLater(next) {
        if (!self) throw new Error('AWS_LAMBDA_FUNCTION_NAME is not set: the bake cannot continue itself');
        await lambda.send(
          new InvokeCommand({ FunctionName: self, InvocationType: 'Event', Payload: JSON.stringify(next) }),
        );
      },
      log: (line) => console.log(line),
      // Wall time: the deadline is CodeDeploy's hour and the windows are CloudWatch's minutes (no Runtime, as above).
      // eslint-disable-next-line no-restricted-properties
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    },
    config,
  );
};
