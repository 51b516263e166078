/**
 * Powertools logger and metrics, created once per container. Locally and in tests the local server sets
 * POWERTOOLS_METRICS_DISABLED and a quiet log level.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

// Service name, namespace and log level come from POWERTOOLS_* (set by the stack); every metric carries the stage.
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'animal-store' });
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'AnimalStore',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'animal-store',
  defaultDimensions: { stage: process.env.STAGE ?? 'local' },
});

let pending = false;

/**
 * Counts one occurrence of a metric in this invocation. With `dimensions` it is published at once (one EMF line)
 * under two dimension sets: the default ones alone ({service, stage}) and the defaults plus `dimensions`. CloudWatch
 * matches an alarm's dimensions exactly, so alarms watch the first set (every occurrence, whatever the details);
 * the second is the breakdown (by reason, code, operation) for dashboards and investigation. Each of `more` is one
 * further breakdown, its own dimension set (e.g. 429s by code and, separately, by plan).
 */
export function countMetric(
  name: string,
  dimensions: Record<string, string> = {},
  ...more: Record<string, string>[]
): void {
  if (Object.keys(dimensions).length) {
    const single = metrics.singleMetric();
    single.addDimensions({});
    single.addDimensions(dimensions);
    for (const breakdown of more) single.addDimensions(breakdown);
    single.addMetric(name, MetricUnit.Count, 1);
    return;
  }
  metrics.addMetric(name, MetricUnit.Count, 1);
  pending = true;
}

/** Publishes this invocation's metrics, if any (an empty flush would only log a warning). */
export function flushMetrics(): void {
  if (!pending) return;
  pending = false;
  metrics.publishStoredMetrics();
}
