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
import { LogLevelThreshold, Logger as PowertoolsLogger, type LogItem } from '@aws-lambda-powertools/logger';
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
  /**
   * Adds `n` occurrences under the default set, kept until `flush` like a count without dimensions, as one value:
   * a total added up over many invocations is one number on one line (Powertools writes a line per 100 values).
   */
  add(name: string, n: number): void;
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

/**
 * Powertools prints to a Console of its own on stdout and takes no stream option; tests and the local server
 * (several functions in one process) need each function's lines apart. So the two classes are extended at their
 * public and protected seams, never by writing their private fields (which an upgrade could rename silently;
 * test/unit/library-private-fields.test.ts fails on any such write): the Logger's `printLog`, and the Metrics'
 * `publishStoredMetrics` and `singleMetric`. Without a writer, Powertools prints as it always does.
 */
function routedLogger(options: ConstructorParameters<typeof PowertoolsLogger>[0], write: LineWriter | undefined) {
  if (!write) return new PowertoolsLogger(options);
  // A class per writer (not a field): the Logger prints from its own constructor (the sampling notice), before a
  // subclass's fields exist.
  class RoutedLogger extends PowertoolsLogger {
    protected override printLog(_logLevel: number, log: LogItem): void {
      log.prepareForPrint();
      write!(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
    }
  }
  return new RoutedLogger(options);
}

type MetricsOptions = NonNullable<ConstructorParameters<typeof Metrics>[0]>;

/**
 * Metrics whose lines (its own, the ColdStart metric's, every count with a breakdown) go to `write` when given. A
 * single metric (the ColdStart metric) is routed too, built on the same options.
 */
function routedMetrics(options: MetricsOptions, write: LineWriter | undefined): Metrics {
  if (!write) return new Metrics(options);
  class RoutedMetrics extends Metrics {
    override publishStoredMetrics(): this {
      try {
        if (this.hasStoredMetrics() && !this.isDisabled()) write!(JSON.stringify(this.serializeMetrics()));
      } finally {
        this.clearMetrics();
        this.clearDimensions();
        this.clearMetadata();
      }
      return this;
    }
    override singleMetric(): Metrics {
      return new RoutedMetrics({ ...options, singleMetric: true });
    }
  }
  return new RoutedMetrics(options);
}

/** The API Gateway request id: the only path the envelope asks for (Powertools' JMESPath engine is not needed). */
const REQUEST_ID_PATH = 'requestContext.requestId';
const searchPath = (path: string, data: unknown): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], data);

export function createTelemetry(settings: TelemetrySettings, write?: LineWriter): Telemetry {
  const logger = routedLogger(
    {
      serviceName: settings.service,
      logLevel: settings.logLevel,
      ...(settings.sampleRate ? { sampleRateValue: settings.sampleRate } : {}),
      correlationIdSearchFn: searchPath,
    },
    write,
  );
  // A line below the invocation's level (sampling may lower it per invocation: `level` is read at each call) is
  // dropped before Powertools builds it; Powertools itself reads the X-Ray trace id from the environment first, a few
  // microseconds on every call of the envelope's per-request DEBUG line. Log buffering, which would keep such lines,
  // is not used.
  const log: Logger = {
    debug: (message, extra = {}) => {
      if (logger.level <= LogLevelThreshold.DEBUG) logger.debug(message, extra);
    },
    info: (message, extra = {}) => {
      if (logger.level <= LogLevelThreshold.INFO) logger.info(message, extra);
    },
    warn: (message, extra = {}) => logger.warn(message, extra),
    error: (message, extra = {}) => logger.error(message, extra),
  };
  const options: MetricsOptions = {
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
  };
  const metrics = routedMetrics(options, write);
  // The counts with a breakdown, one line each: one instance kept for them, its dimension sets cleared by each
  // publish. (A single metric per count built a Metrics, and with it a Console, on every call: ~150 us a 501.)
  let breakdowns: Metrics | undefined;

  return {
    log,
    count(name, dimensions = {}, ...more) {
      if (!settings.metrics) return;
      if (!Object.keys(dimensions).length) {
        metrics.addMetric(name, MetricUnit.Count, 1);
        return;
      }
      // Each set carries the default dimensions; the empty set is the defaults alone.
      // Built at the first count that needs it: most invocations never count one, and a cold start need not pay.
      breakdowns ??= routedMetrics(options, write);
      for (const set of [{}, dimensions, ...more]) breakdowns.addDimensions(set);
      breakdowns.addMetric(name, MetricUnit.Count, 1);
      breakdowns.publishStoredMetrics();
    },
    add(name, n) {
      if (settings.metrics && n > 0) metrics.addMetric(name, MetricUnit.Count, n);
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
