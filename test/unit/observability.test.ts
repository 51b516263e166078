/**
 * Log lines and EMF metrics as CloudWatch reads them. The EMF rules checked are those of AWS's "Specification:
 * Embedded metric format" (CloudWatch User Guide): a root `_aws` with a Timestamp in epoch milliseconds and
 * CloudWatchMetrics directives, each with a Namespace, Dimensions (an array of dimension sets, each at most 30
 * dimension keys, every key a top-level string member) and Metrics (at most 100, each Name a top-level number).
 * A line breaking them is dropped by CloudWatch without an error anywhere, so no alarm would ever see the metric.
 */
import { describe, expect, it } from 'vitest';
import { createTelemetry, type TelemetrySettings } from '../../lambdas/shared/observability.ts';

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
  for (const m of d.Metrics) expect(typeof line[m.Name], m.Name).toBe('number');
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
    expect(parsed()[0]!.AuthorizerDenied).toBe(2);
  });

  it('writes no metric when metrics are off (locally)', () => {
    const { telemetry, lines } = capture({ metrics: false });
    telemetry.count('StorageUnavailable', { reason: 'x' });
    telemetry.count('AuthorizerDenied');
    telemetry.flush();
    expect(lines).toEqual([]);
  });
});

describe('logs', () => {
  it('writes JSON lines at or above the level, with the service and the request id', () => {
    const { telemetry, parsed } = capture({ logLevel: 'WARN' });
    telemetry.log.setCorrelationId('req-1');
    telemetry.log.info('not written');
    telemetry.log.warn('written', { reason: 'x' });
    expect(parsed()).toEqual([
      {
        level: 'WARN',
        message: 'written',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        service: 'animal-store',
        correlation_id: 'req-1',
        reason: 'x',
      },
    ]);
  });

  it('writes nothing at SILENT', () => {
    const { telemetry, lines } = capture({ logLevel: 'SILENT' });
    telemetry.log.error('not written');
    expect(lines).toEqual([]);
  });
});
