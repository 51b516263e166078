import type { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import type { CustomMetrics } from './server-error-rate.ts';

/**
 * Deploy gates that compare the version being deployed with the one it replaces, on what each version did during
 * the canary. CodeDeploy's weights pick the version that answers a request at random, so anything a caller can
 * send — a flood of forged tokens, a customer hammering a key, storage throttled by either — lands on both versions
 * alike and leaves the difference near 0; only a version that fails more than its predecessor moves it. No gate
 * reads an API-wide metric (the gateway's 5XXError or Count), which anyone's traffic moves.
 *
 * Lambda publishes Invocations and Errors for invocations through an alias under two dimension sets: {FunctionName,
 * Resource "<function>:<alias>"} (all versions) and the same plus ExecutedVersion (the version that ran). The new
 * version is the one this template points the alias at (the alarm is updated before the alias, which waits for its
 * deployment group and so for its alarms); the old one is the alias's total minus the new one. Outside a deploy
 * the old version has no invocations and the comparison is not judged.
 */

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
 * The operation's `InternalError` count (an unexpected failure answered 500 `internal_error`: a handler bug shows
 * here, not in Lambda's Errors) under the exact dimension sets the function publishes it with: the defaults plus
 * `operation` (every version), and plus `version` too.
 */
export function internalErrors(custom: CustomMetrics, operation: string, period: Duration, version?: string): Metric {
  return new Metric({
    namespace: custom.namespace,
    metricName: 'InternalError',
    dimensionsMap: {
      ...custom.dimensions,
      operation,
      ...(version === undefined ? {} : { [VERSION_DIMENSION]: version }),
    },
    period,
    statistic: 'Sum',
  });
}

const NEW_INVOCATIONS = 'FILL(newInvocations, 0)';
const OLD_INVOCATIONS = '(FILL(allInvocations, 0) - FILL(newInvocations, 0))';

/**
 * How many points the share of the authorizer's invocations that threw (denied a key or failed) is higher on the
 * new version than on the old, judged only when each version ran at least `minInvocations` times in the period.
 * The authorizer denies by throwing, so Lambda's Errors counts denials: a flood of forged tokens raises both shares.
 */
export function authorizerExcessErrorShare(alias: Alias, period: Duration, minInvocations: number): MathExpression {
  const v = alias.version.version;
  return new MathExpression({
    expression:
      `IF(${NEW_INVOCATIONS} >= ${minInvocations} AND ${OLD_INVOCATIONS} >= ${minInvocations}, ` +
      `100 * FILL(newErrors, 0) / ${NEW_INVOCATIONS} - ` +
      `100 * (FILL(allErrors, 0) - FILL(newErrors, 0)) / ${OLD_INVOCATIONS}, 0)`,
    usingMetrics: {
      newInvocations: aliasMetric(alias, 'Invocations', period, v),
      newErrors: aliasMetric(alias, 'Errors', period, v),
      allInvocations: aliasMetric(alias, 'Invocations', period),
      allErrors: aliasMetric(alias, 'Errors', period),
    },
    period,
  });
}

/**
 * How many points the share of an operation's invocations that failed — a Lambda error (crash, timeout, init
 * failure) or a 500 `internal_error` answer — is higher on the new version than on the old, judged once the new
 * version has failed at least `minFailures` times in the period (one failure among a handful of canary requests is
 * no trend in staging; production judges every one). A period without old invocations is not judged: outside a
 * deploy, and once the shift is complete, there is nothing to compare with (and a flood's failures, which both
 * versions share, would otherwise count against the new one alone).
 */
export function operationExcessFailureShare(
  alias: Alias,
  custom: CustomMetrics,
  operation: string,
  period: Duration,
  minFailures: number,
): MathExpression {
  const v = alias.version.version;
  const newFailures = '(FILL(newErrors, 0) + FILL(newInternal, 0))';
  const oldFailures = '(FILL(allErrors, 0) - FILL(newErrors, 0) + FILL(allInternal, 0) - FILL(newInternal, 0))';
  return new MathExpression({
    expression:
      `IF(${newFailures} >= ${minFailures} AND ${NEW_INVOCATIONS} > 0 AND ${OLD_INVOCATIONS} > 0, ` +
      `100 * ${newFailures} / ${NEW_INVOCATIONS} - 100 * ${oldFailures} / ${OLD_INVOCATIONS}, 0)`,
    usingMetrics: {
      newInvocations: aliasMetric(alias, 'Invocations', period, v),
      newErrors: aliasMetric(alias, 'Errors', period, v),
      newInternal: internalErrors(custom, operation, period, v),
      allInvocations: aliasMetric(alias, 'Invocations', period),
      allErrors: aliasMetric(alias, 'Errors', period),
      allInternal: internalErrors(custom, operation, period),
    },
    period,
  });
}
