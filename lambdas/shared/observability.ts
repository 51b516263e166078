/**
 * Structured logs and CloudWatch metrics on Powertools for AWS Lambda (Logger and Metrics): one JSON line per log
 * with the keys operators expect (cold_start, function_name, function_request_id, xray_trace_id, sampling_rate,
 * correlation_id: the API Gateway request id), and metrics in the embedded metric format (EMF) on stdout, which
 * CloudWatch extracts, with the ColdStart metric. Built once per function by the composition root from its
 * configuration; the operations' envelope (http.ts) runs Powertools' middy middlewares, the authorizer calls `begin`.
 *
 * Powertools reads a few variables of its own from the environment Lambda sets: the X-Ray trace id, the Region,
 * AWS_LAMBDA_LOG_LEVEL (Lambda's advanced logging controls win over LOG_LEVEL), POWERTOOLS_DEV.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type middy from '@middy/core';
import type { Context } from 'aws-lambda';

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface TelemetrySettings {
  /** The `service` key of every log line and the `service` dimension of every metric. */
  readonly service: string;
  /** The CloudWatch namespace of the metrics. */
  readonly namespace: string;
  /** The `stage` dimension of every metric. */
  readonly stage: string;
  readonly logLevel: LogLevel;
  /** The share of invocations (0 to 1) logged at DEBUG whatever the level (`sampling_rate`). @default 0 */
  readonly sampleRate?: number;
  /** Off locally: no EMF lines among the developer's logs. */
  readonly metrics: boolean;
}

export interface Logger {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

export interface Telemetry {
  readonly log: Logger;
  /**
   * Counts one occurrence of a metric. With `dimensions` it is published at once (one EMF line) under two dimension
   * sets: the default ones alone ({service, stage}) and the defaults plus `dimensions`. CloudWatch matches an
   * alarm's dimensions exactly, so alarms watch the first set (every occurrence, whatever the details); the second
   * is the breakdown (by reason, code, operation) for dashboards and investigation. Each of `more` is one further
   * breakdown, its own dimension set (e.g. 429s by code and, separately, by plan). Without dimensions the count is
   * kept until `flush` (the envelope's, after each invocation), one line per invocation under the default set.
   */
  count(name: string, dimensions?: Record<string, string>, ...more: Record<string, string>[]): void;
  /** Publishes this invocation's pending counts, if any. */
  flush(): void;
  /**
   * Powertools' middy middlewares, outermost first: the Lambda context and the request id on every log line (reset
   * after each invocation), then the ColdStart metric and the flush of the counts after the invocation.
   */
  middlewares(): middy.MiddlewareObj[];
  /** For a function without middy (the authorizer): the Lambda context on the log lines, and the ColdStart metric. */
  begin(context: Context | undefined): void;
}

/** Where lines go: stdout by default (Lambda sends it to CloudWatch Logs); tests pass a sink of their own. */
export type LineWriter = (line: string) => void;

/** What Powertools prints with: its Console's methods, each given one formatted line. */
type Printer = Pick<Console, 'log' | 'debug' | 'info' | 'warn' | 'error' | 'trace'>;
const printerOf = (write: LineWriter): Printer => {
  const print = (line: unknown) => write(String(line));
  return { log: print, debug: print, info: print, warn: print, error: print, trace: print };
};

/**
 * Points a Powertools Logger or Metrics at `printer`. Powertools prints to a Console of its own on stdout and takes
 * no stream option; tests and the local server (several functions in one process) need each function's lines apart.
 */
const printTo = <T extends object>(instance: T, printer: Printer | undefined): T => {
  if (printer) (instance as unknown as { console: Printer }).console = printer;
  return instance;
};

/** Metrics whose single-metric lines (the ColdStart metric, every count with a breakdown) print where its own do. */
class RoutedMetrics extends Metrics {
  readonly #printer: Printer | undefined;
  constructor(options: ConstructorParameters<typeof Metrics>[0], printer: Printer | undefined) {
    super(options);
    printTo(this, printer);
    this.#printer = printer;
  }
  override singleMetric(): Metrics {
    return printTo(super.singleMetric(), this.#printer);
  }
}

/** The API Gateway request id: the only path the envelope asks for (Powertools' JMESPath engine is not needed). */
const REQUEST_ID_PATH = 'requestContext.requestId';
const searchPath = (path: string, data: unknown): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], data);

export function createTelemetry(settings: TelemetrySettings, write?: LineWriter): Telemetry {
  const printer = write ? printerOf(write) : undefined;
  const logger = printTo(
    new PowertoolsLogger({
      serviceName: settings.service,
      logLevel: settings.logLevel,
      ...(settings.sampleRate ? { sampleRateValue: settings.sampleRate } : {}),
      correlationIdSearchFn: searchPath,
    }),
    printer,
  );
  const log: Logger = {
    debug: (message, extra = {}) => logger.debug(message, extra),
    info: (message, extra = {}) => logger.info(message, extra),
    warn: (message, extra = {}) => logger.warn(message, extra),
    error: (message, extra = {}) => logger.error(message, extra),
  };
  const metrics = new RoutedMetrics(
    {
      namespace: settings.namespace,
      serviceName: settings.service,
      defaultDimensions: { stage: settings.stage },
      // Its own warnings go to the log; "no application metrics to publish" is the normal case of most invocations.
      logger: {
        debug: (message: string) => log.debug(message),
        info: (message: string) => log.info(message),
        warn: (message: string) =>
          message.startsWith('No application metrics') ? log.debug(message) : log.warn(message),
        error: (message: string) => log.error(message),
      },
    },
    printer,
  );

  return {
    log,
    count(name, dimensions = {}, ...more) {
      if (!settings.metrics) return;
      if (!Object.keys(dimensions).length) {
        metrics.addMetric(name, MetricUnit.Count, 1);
        return;
      }
      // A single metric carries the default dimensions into each set; the empty set is the defaults alone.
      const single = metrics.singleMetric();
      for (const set of [{}, dimensions, ...more]) single.addDimensions(set);
      single.addMetric(name, MetricUnit.Count, 1);
    },
    flush() {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    },
    middlewares() {
      return [
        // Never the event (logEvent): it holds the client's key.
        injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: REQUEST_ID_PATH }),
        ...(settings.metrics ? [logMetrics(metrics, { captureColdStartMetric: true })] : []),
      ] as middy.MiddlewareObj[];
    },
    begin(context) {
      if (!context) return;
      logger.addContext(context);
      if (settings.metrics) metrics.captureColdStartMetric(context.functionName);
    },
  };
}
