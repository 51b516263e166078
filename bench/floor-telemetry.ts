/**
 * The floors' Powertools Logger and Metrics (bench/floor-handler.ts, bench/floor-warm-handler.ts), configured as a
 * careful user would, and as the functions are (lambdas/shared/observability.ts): a correlation id search function
 * (without one, Powertools warns on every invocation that correlationIdPath is set) and the Metrics' "no application
 * metrics" warning, the normal case of most invocations, left unwritten. At their defaults the floors wrote two
 * warning lines per invocation that the functions do not write.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export function floorTelemetry(logLevel: string | undefined) {
  const logger = new Logger({
    serviceName: 'floor',
    logLevel: (logLevel ?? 'WARN') as 'WARN',
    correlationIdSearchFn: (path: string, data: unknown) =>
      path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], data),
  });
  const metrics = new Metrics({
    namespace: 'Floor',
    serviceName: 'floor',
    defaultDimensions: { stage: 'local' },
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: (m: string) => (m.startsWith('No application metrics') ? undefined : logger.warn(m)),
      error: (m: string) => logger.error(m),
    },
  });
  return { logger, metrics };
}
