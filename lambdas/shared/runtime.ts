/**
 * The composition root: what a function is built on (configuration, clock, DynamoDB clients, logs and metrics),
 * made once per container and passed to the handler factory. Nothing below it reads the environment or the wall
 * clock on its own, so the local server and the tests build functions with a configuration and a clock of their
 * own, side by side in one process.
 */
import type { StandingStore } from '../domain/keys.ts';
import type { LimitCounters } from '../domain/rate-limit.ts';
import { createStorage, tableNamesIn, type Storage } from '../storage/client.ts';
import { createLimitStore } from '../storage/limit-store.ts';
import { createStandingStore } from '../storage/standing.ts';
import { loadConfig, type Config } from './config.ts';
import type { CursorKeySource, SecretReader, cursorKeySource } from './cursor-keys.ts';
import { createTelemetry, type LineWriter, type Telemetry } from './observability.ts';

/** Milliseconds since the epoch. */
export type Clock = () => number;

export interface Runtime {
  readonly config: Config;
  readonly now: Clock;
  readonly storage: Storage;
  readonly telemetry: Telemetry;
  /** The pagination-cursor keys, for a function configured with them (a list operation); undefined for the others. */
  readonly cursorKeys?: CursorKeySource;
}

export interface RuntimeOptions {
  /** @default Date.now */
  readonly now?: Clock;
  /** Where log and EMF lines go. @default stdout (Lambda sends it to CloudWatch Logs) */
  readonly write?: LineWriter;
  /**
   * Reads a secret's versions: given by the Lambda entry of a function whose configuration names a secret
   * (CURSOR_SECRET_ARN), built on the function's configuration and storage (whose client has resolved the
   * credentials). Not needed with STAGE=local, which never calls Secrets Manager.
   */
  readonly readSecret?: (config: Config, storage: Storage) => SecretReader;
  /**
   * Builds the pagination-cursor keys (cursorKeySource), given by the Lambda entry of a function that signs cursors
   * (a list operation) only, so no other function's bundle carries them.
   */
  readonly cursorKeys?: typeof cursorKeySource;
}

export function createRuntime(config: Config, options: RuntimeOptions = {}): Runtime {
  const now = options.now ?? Date.now;
  const telemetry = createTelemetry(
    {
      service: config.SERVICE_NAME,
      namespace: config.METRICS_NAMESPACE,
      stage: config.STAGE,
      logLevel: config.LOG_LEVEL,
      ...(config.POWERTOOLS_LOGGER_SAMPLE_RATE === undefined
        ? {}
        : { sampleRate: config.POWERTOOLS_LOGGER_SAMPLE_RATE }),
      metrics: config.METRICS === 'on',
    },
    options.write,
  );
  const storage = createStorage({
    region: config.AWS_REGION,
    endpoint: config.DYNAMODB_ENDPOINT,
    timeoutMs: config.DYNAMODB_TIMEOUT_MS,
    tables: tableNamesIn(config),
  });
  // The reader is built on the first read only: local runs and benchmarks of the bundle never make one.
  const makeReader = options.readSecret;
  let reader: SecretReader | undefined;
  const read: SecretReader | undefined =
    makeReader && ((id, stage) => (reader ??= makeReader(config, storage))(id, stage));
  const cursorKeys = options.cursorKeys?.(config, read, now, (error) =>
    telemetry.log.warn('Re-reading the cursor secret failed; the keys read before stay in use', {
      error: error instanceof Error ? error.name : 'unknown',
    }),
  );
  return {
    config,
    now,
    storage,
    telemetry,
    ...(cursorKeys ? { cursorKeys } : {}),
  };
}

/** A deployed function's runtime: its environment variables, the wall clock, stdout. */
export function runtimeFromEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: Pick<RuntimeOptions, 'readSecret' | 'cursorKeys'> = {},
): Runtime {
  return createRuntime(loadConfig(env), options);
}

/** The request path's ports: the limiter's counters and the keys' standings. */
export interface RequestPathPorts {
  readonly counters: LimitCounters;
  readonly standings: StandingStore;
}

/** The request path's stores over a runtime's storage (the envelope's admission and the authorizer take them). */
export function requestPathPorts(rt: Pick<Runtime, 'storage' | 'telemetry'>): RequestPathPorts {
  return { counters: createLimitStore(rt.storage, rt.telemetry), standings: createStandingStore(rt.storage) };
}

/** Builds a function's handler from a runtime: what each handler module exports. */
export type HandlerFactory<H> = (runtime: Runtime) => H;
