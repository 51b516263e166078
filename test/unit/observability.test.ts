/**
 * Log lines and EMF metrics (Powertools Logger and Metrics) as CloudWatch reads them. The EMF rules checked are those of AWS's "Specification:
 * Embedded metric format" (CloudWatch User Guide): a root `_aws` with a Timestamp in epoch milliseconds and
 * CloudWatchMetrics directives, each with a Namespace, Dimensions (an array of dimension sets, each at most 30
 * dimension keys, every key a top-level string member) and Metrics (at most 100, each Name a top-level number).
 * A line breaking them is dropped by CloudWatch without an error anywhere, so no alarm would ever see the metric.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createTelemetry, type Telemetry, type TelemetrySettings } from '../../lambdas/shared/observability.ts';

const SETTINGS: TelemetrySettings = {
  service: 'animal-store',
  namespace: 'AnimalStore',
  stage: 'staging',
  logLevel: 'INFO',
  metrics: true,
};

function capture(settings: Partial<TelemetrySettings> = {}) {
  const lines: string[] = [];
  const telemetry = createTelemetry({ ...SETTINGS, ...settings }, (l) => lines.push(l));
  return { telemetry, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: { Name: string; Unit?: string }[];
}

/** Asserts the EMF specification's structural rules on one line; returns its directive. */
function expectValidEmf(line: Record<string, unknown>): Directive {
  const aws = line._aws as { Timestamp: number; CloudWatchMetrics: Directive[] };
  expect(Number.isInteger(aws.Timestamp)).toBe(true);
  expect(Math.abs(aws.Timestamp - Date.now())).toBeLessThan(60_000); // milliseconds, not seconds
  expect(aws.CloudWatchMetrics).toHaveLength(1);
  const d = aws.CloudWatchMetrics[0]!;
  expect(d.Namespace).toMatch(/^[^:].{0,254}$/);
  expect(d.Metrics.length).toBeGreaterThan(0);
  expect(d.Metrics.length).toBeLessThanOrEqual(100);
  for (const set of d.Dimensions) {
    expect(set.length).toBeLessThanOrEqual(30);
    for (const key of set) expect(typeof line[key], key).toBe('string');
  }
  // A metric's value is a number or an array of up to 100 numbers (each a sample).
  for (const m of d.Metrics) {
    const values = [line[m.Name]].flat();
    expect(values.length, m.Name).toBeLessThanOrEqual(100);
    for (const v of values) expect(typeof v, m.Name).toBe('number');
  }
  return d;
}

describe('metrics (EMF)', () => {
  it('a count with a breakdown is one line under the default set alone and the default set plus the breakdown', () => {
    const { telemetry, parsed } = capture();
    telemetry.count('RateLimited', { code: 'rate_limited' }, { plan: 'free' });
    const [line] = parsed();
    const d = expectValidEmf(line!);
    expect(d).toEqual({
      Namespace: 'AnimalStore',
      Dimensions: [
        ['service', 'stage'],
        ['service', 'stage', 'code'],
        ['service', 'stage', 'plan'],
      ],
      Metrics: [{ Name: 'RateLimited', Unit: 'Count' }],
    });
    expect(line).toMatchObject({ service: 'animal-store', stage: 'staging', code: 'rate_limited', plan: 'free' });
    expect(line!.RateLimited).toBe(1);
  });

  it('counts without a breakdown wait for the flush, one line per invocation, and an empty flush writes nothing', () => {
    const { telemetry, lines, parsed } = capture();
    telemetry.count('AuthorizerDenied');
    telemetry.count('AuthorizerDenied');
    expect(lines).toHaveLength(0);
    telemetry.flush();
    telemetry.flush();
    expect(lines).toHaveLength(1);
    const d = expectValidEmf(parsed()[0]!);
    expect(d.Dimensions).toEqual([['service', 'stage']]);
    // EMF takes one value or an array of values, each a sample: CloudWatch's Sum is what the alarms read.
    expect([parsed()[0]!.AuthorizerDenied].flat().reduce((a, b) => Number(a) + Number(b), 0)).toBe(2);
  });

  it('writes no metric when metrics are off (locally)', () => {
    const { telemetry, lines } = capture({ metrics: false });
    telemetry.count('StorageUnavailable', { reason: 'x' });
    telemetry.count('AuthorizerDenied');
    telemetry.flush();
    expect(lines).toEqual([]);
  });
});

/** A Lambda context as the runtime passes it. */
const CONTEXT = {
  functionName: 'AnimalStore-staging-ListPets',
  awsRequestId: 'c0ffee00-0000-4000-8000-00000000aaaa',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:AnimalStore-staging-ListPets',
  memoryLimitInMB: '1024',
  functionVersion: '7',
} as unknown as Context;

/** One invocation of a handler wrapped in the telemetry's middlewares, with API Gateway's request id `requestId`. */
async function invoke(telemetry: Telemetry, requestId: string, body: () => void) {
  const handler = middy()
    .use(telemetry.middlewares())
    .handler(async () => body());
  await handler({ requestContext: { requestId } }, CONTEXT);
}

describe('logs', () => {
  it("carry Powertools' keys: the Lambda context, the X-Ray trace, API Gateway's request id as correlation id", async () => {
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand'); // as Lambda sets it: Powertools' cold-start rule
    const { telemetry, parsed } = capture({ metrics: false });
    await invoke(telemetry, 'req-1', () => telemetry.log.info('first', { operation: 'listPets' }));
    await invoke(telemetry, 'req-2', () => telemetry.log.info('second'));
    telemetry.log.info('outside');
    vi.unstubAllEnvs();
    const [first, second, outside] = parsed();
    expect(first).toMatchObject({
      level: 'INFO',
      message: 'first',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      service: 'animal-store',
      cold_start: true,
      function_name: CONTEXT.functionName,
      function_request_id: CONTEXT.awsRequestId,
      function_arn: CONTEXT.invokedFunctionArn,
      xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      correlation_id: 'req-1',
      operation: 'listPets',
    });
    expect(second).toMatchObject({ cold_start: false, correlation_id: 'req-2' });
    // The request id is the request's only: reset after each invocation.
    expect(outside!.correlation_id).toBeUndefined();
  });

  it('writes lines at or above the level only', () => {
    const { telemetry, parsed } = capture({ logLevel: 'WARN' });
    telemetry.log.info('not written');
    telemetry.log.warn('written', { reason: 'x' });
    expect(parsed()).toEqual([expect.objectContaining({ level: 'WARN', message: 'written', reason: 'x' })]);
  });

  it('logs a sampled invocation at DEBUG whatever the level, and says so on each line', () => {
    const { telemetry, parsed } = capture({ logLevel: 'ERROR', sampleRate: 1 });
    telemetry.log.debug('sampled');
    expect(parsed()).toContainEqual(expect.objectContaining({ level: 'DEBUG', message: 'sampled', sampling_rate: 1 }));
  });

  it('writes nothing at SILENT', async () => {
    const { telemetry, lines } = capture({ logLevel: 'SILENT', metrics: false });
    await invoke(telemetry, 'req-1', () => telemetry.log.error('not written'));
    expect(lines).toEqual([]);
  });
});

describe('the ColdStart metric', () => {
  it('is one line at the first invocation only, under the defaults and the function name', async () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const { telemetry, parsed } = capture({ logLevel: 'SILENT' });
    vi.unstubAllEnvs();
    await invoke(telemetry, 'req-1', () => telemetry.count('DeprecatedOperationCall', { operation: 'getPet' }));
    await invoke(telemetry, 'req-2', () => undefined);
    const cold = parsed().filter((l) => 'ColdStart' in l);
    expect(cold).toHaveLength(1);
    expect(expectValidEmf(cold[0]!).Dimensions).toEqual([['service', 'stage', 'function_name']]);
    expect(cold[0]).toMatchObject({ service: 'animal-store', stage: 'staging', function_name: CONTEXT.functionName });
    expect(parsed().filter((l) => 'DeprecatedOperationCall' in l)).toHaveLength(1);
  });
});
