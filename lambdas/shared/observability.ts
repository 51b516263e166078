/**
 * Structured logs (one JSON line each) and CloudWatch metrics in the embedded metric format (EMF), written to stdout,
 * which Lambda sends to CloudWatch Logs; CloudWatch extracts the metrics from the EMF lines. Built once per function
 * by the composition root from its configuration.
 *
 * Written here rather than taken from Powertools: the two features the service uses fit in this file, and dropping
 * Powertools took ~31 KB off every bundle (docs/performance.md). The EMF shape follows AWS's specification
 * ("Specification: Embedded metric format", CloudWatch User Guide); test/unit/observability.test.ts checks it.
 */

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
  /** Off locally: no EMF lines among the developer's logs. */
  readonly metrics: boolean;
}

export interface Logger {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
  /** The request id every following line carries (`correlation_id`), until the next request sets its own. */
  setCorrelationId(id: string | undefined): void;
}

export interface Telemetry {
  readonly log: Logger;
  /**
   * Counts one occurrence of a metric. With `dimensions` it is published at once (one EMF line) under two dimension
   * sets: the default ones alone ({service, stage}) and the defaults plus `dimensions`. CloudWatch matches an
   * alarm's dimensions exactly, so alarms watch the first set (every occurrence, whatever the details); the second
   * is the breakdown (by reason, code, operation) for dashboards and investigation. Each of `more` is one further
   * breakdown, its own dimension set (e.g. 429s by code and, separately, by plan). Without dimensions the count is
   * kept until `flush`, one line per invocation.
   */
  count(name: string, dimensions?: Record<string, string>, ...more: Record<string, string>[]): void;
  /** Publishes this invocation's pending counts, if any. */
  flush(): void;
}

/** Where lines go: stdout by default (Lambda sends it to CloudWatch Logs); tests pass a sink of their own. */
export type LineWriter = (line: string) => void;

const writeStdout: LineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 99 };

function createLogger(settings: TelemetrySettings, write: LineWriter): Logger {
  const threshold = RANK[settings.logLevel];
  let correlationId: string | undefined;
  const at =
    (level: Exclude<LogLevel, 'SILENT'>) =>
    (message: string, extra: Record<string, unknown> = {}): void => {
      if (RANK[level] < threshold) return;
      const trace = process.env._X_AMZN_TRACE_ID;
      write(
        JSON.stringify({
          level,
          message,
          timestamp: new Date().toISOString(),
          service: settings.service,
          ...(correlationId ? { correlation_id: correlationId } : {}),
          ...(trace ? { xray_trace_id: trace.split(';')[0]?.replace('Root=', '') } : {}),
          ...extra,
        }),
      );
    };
  return {
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
    setCorrelationId: (id) => {
      correlationId = id;
    },
  };
}

export function createTelemetry(settings: TelemetrySettings, write: LineWriter = writeStdout): Telemetry {
  const defaults: Record<string, string> = { service: settings.service, stage: settings.stage };
  const defaultSet = Object.keys(defaults);
  let pending: Record<string, number> = {};

  /** One EMF line: `counts` under each dimension set, all sets over the defaults. */
  const emit = (counts: Record<string, number>, breakdowns: Record<string, string>[]): void => {
    const values = Object.assign({}, defaults, ...breakdowns) as Record<string, string>;
    write(
      JSON.stringify({
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [
            {
              Namespace: settings.namespace,
              Dimensions: [defaultSet, ...breakdowns.map((b) => [...defaultSet, ...Object.keys(b)])],
              Metrics: Object.keys(counts).map((Name) => ({ Name, Unit: 'Count' })),
            },
          ],
        },
        ...values,
        ...counts,
      }),
    );
  };

  return {
    log: createLogger(settings, write),
    count(name, dimensions = {}, ...more) {
      if (!settings.metrics) return;
      if (Object.keys(dimensions).length) emit({ [name]: 1 }, [dimensions, ...more]);
      else pending[name] = (pending[name] ?? 0) + 1;
    },
    flush() {
      if (!Object.keys(pending).length) return;
      const counts = pending;
      pending = {};
      emit(counts, []);
    },
  };
}
