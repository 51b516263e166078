import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import {
  GATE_FLOOR_SIGMAS,
  GATE_MARGIN,
  GATE_MIN_FAILURES,
  GATE_PERIOD_SECONDS,
  GATE_SIGMAS,
} from '../config/deploy-gates.ts';
import type { CustomMetrics } from './server-error-rate.ts';

/**
 * Deploy gates: each compares the version being deployed with the one it replaces, on the canary's traffic.
 * CodeDeploy routes each request to a version at random, so what callers send lands on both alike. No gate reads an
 * API-wide metric, which anyone's traffic moves.
 * The new version is the one this template points the alias at; the old one is the alias's total minus it. Outside
 * a deploy the old version has no invocations, so nothing is judged.
 * If both fail alike, the new version's f of the alias's F failures is Binomial(F, w), w its share of invocations.
 * A gate fires when f exceeds that by GATE_SIGMAS standard deviations plus GATE_MARGIN, with at least
 * GATE_MIN_FAILURES failures. w is floored near the canary's weight: the shift's first bucket dilutes it.
 * Its TypeScript twin: bench/models/gate-simulation.ts (test/infra/gate-simulation.test.ts proves the two equal).
 */

/**
 * One bucket of the canary that CloudWatch can still judge in time (lib/preflight/canary-timing.ts: 2 x 180 s +
 * 120 s + 60 s <= 600 s). An alarm sums nothing across its periods, so the period is the window.
 */
export const GATE_PERIOD = Duration.seconds(GATE_PERIOD_SECONDS);
export { GATE_FLOOR_SIGMAS, GATE_MARGIN, GATE_MIN_FAILURES, GATE_SIGMAS };

/** Lambda's metric of the alias (`version` undefined: every version) or of one version run through it. */
export function aliasMetric(alias: Alias, metricName: string, period: Duration, version?: string): Metric {
  const fn = alias.version.lambda;
  return new Metric({
    namespace: 'AWS/Lambda',
    metricName,
    dimensionsMap: {
      FunctionName: fn.functionName,
      Resource: `${fn.functionName}:${alias.aliasName}`,
      ...(version === undefined ? {} : { ExecutedVersion: version }),
    },
    period,
    statistic: 'Sum',
  });
}

/**
 * The dimension a function's per-version counts carry (lambdas/shared/http.ts): the version that ran, as Lambda's
 * context names it (`functionVersion`), beside the operation, so two functions' version numbers never meet.
 */
export const VERSION_DIMENSION = 'version';

/**
 * The operation's `ServerError` count (every 5xx the function answered itself, not a 501) for invocations through
 * the `live` alias, under the dimension sets the function publishes: with `operation`, and with `version` too. The
 * pre-traffic check invokes versions directly, so its answers enter no gate.
 */
export function serverErrors(custom: CustomMetrics, operation: string, period: Duration, version?: string): Metric {
  return new Metric({
    namespace: custom.namespace,
    metricName: 'ServerError',
    dimensionsMap: {
      ...custom.dimensions,
      operation,
      ...(version === undefined ? {} : { [VERSION_DIMENSION]: version }),
    },
    period,
    statistic: 'Sum',
  });
}

/**
 * How far the new version's failures `f` are above the bound on what a version failing at the alias's rate would
 * have had, given its share of the invocations (`n` of `N`) and the alias's failures `F`: 0 unless the old version
 * ran (N > n) and f >= GATE_MIN_FAILURES. The share is at least the canary's `weight` less GATE_FLOOR_SIGMAS of
 * routing's noise (gateExcess says why), written with IF: CloudWatch documents MAX for a series only, not for a
 * series and a scalar. The alarm fires at GATE_MARGIN. Each term is a filled series (a sum with an empty series is
 * empty); the divisions are guarded by the IF (N > n >= 0).
 */
function excessOverBound(n: string, N: string, f: string, F: string, weight: number): string {
  const floor = `(${weight} - ${GATE_FLOOR_SIGMAS} * ((${weight} * ${1 - weight} / ${N}) ^ 0.5))`;
  const share = `(${n} / ${N})`;
  const w = `IF(${share} > ${floor}, ${share}, ${floor})`;
  return (
    `IF(${N} - ${n} > 0 AND ${f} >= ${GATE_MIN_FAILURES}, ` +
    `${f} - ${w} * ${F} - ${GATE_SIGMAS} * ((${F} * ${w} * (1 - ${w})) ^ 0.5), 0)`
  );
}

/**
 * The alarm's expression over the alias's invocations and Lambda errors, new version against all: a failure is an
 * error, plus a `ServerError` where `serverErrorsOf` gives that count (for a version, or for all without one).
 */
function excessFailures(
  alias: Alias,
  weight: number,
  period: Duration,
  serverErrorsOf?: (version?: string) => Metric,
): MathExpression {
  const failures = (side: 'new' | 'all'): string =>
    serverErrorsOf ? `(FILL(${side}Errors, 0) + FILL(${side}ServerErrors, 0))` : `FILL(${side}Errors, 0)`;
  const metrics = (side: 'new' | 'all', version?: string): Record<string, Metric> => ({
    [`${side}Invocations`]: aliasMetric(alias, 'Invocations', period, version),
    [`${side}Errors`]: aliasMetric(alias, 'Errors', period, version),
    ...(serverErrorsOf ? { [`${side}ServerErrors`]: serverErrorsOf(version) } : {}),
  });
  return new MathExpression({
    expression: excessOverBound(
      'FILL(newInvocations, 0)',
      'FILL(allInvocations, 0)',
      failures('new'),
      failures('all'),
      weight,
    ),
    usingMetrics: { ...metrics('new', alias.version.version), ...metrics('all') },
    period,
  });
}

/**
 * The authorizer's gate: invocations that threw (a denial, "Unauthorized", or a failure, AUTHORIZER_FAILURE) on
 * the new version against the old version's share. A flood of forged tokens is denied by both versions; a version
 * that denies valid keys or fails its lookups throws where the old one allowed.
 */
export function authorizerExcessErrors(alias: Alias, weight: number, period: Duration = GATE_PERIOD): MathExpression {
  return excessFailures(alias, weight, period);
}

/**
 * An operation's gate: its failures — Lambda errors (crash, timeout, init failure: the gateway's 502 or 504) and
 * every 5xx it answered (`ServerError`) — on the new version against the old version's share.
 */
export function operationExcessFailures(
  alias: Alias,
  custom: CustomMetrics,
  operation: string,
  weight: number,
  period: Duration = GATE_PERIOD,
): MathExpression {
  return excessFailures(alias, weight, period, (version) => serverErrors(custom, operation, period, version));
}
