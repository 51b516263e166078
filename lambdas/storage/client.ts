/**
 * The DynamoDB client and the storage helpers every adapter shares. Only lambdas/storage imports the AWS SDK.
 * Timeouts and attempts are bounded well under API Gateway's 29 s integration timeout, so an unreachable database
 * gives a prompt 503, never a hang.
 */
import { DynamoDBClient, type ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { timeLeft } from './deadline.ts';
import { SigningSha256 } from './signing-hash.ts';
import { UnavailableError } from '../domain/errors.ts';
import { TABLES, tableKey, type TableKey } from '../../contract/tables.ts';

/** Physical table names by table key (contract/tables.ts: `PETS_TABLE_NAME` → `pets`), from the configuration. */
export type TableNames = { readonly [K in TableKey]: string };

/**
 * The table names in a function's environment variables. A table the environment does not hold (the function's
 * access does not name it) is there too, as a name that throws when read, naming its variable: a store used
 * without its grant fails at its first call with that message, never with a call on an undefined table.
 */
export function tableNamesIn(env: Readonly<Partial<Record<string, unknown>>>): TableNames {
  const names = {} as Record<TableKey, string>;
  for (const def of TABLES) {
    const name = env[def.envVar];
    if (typeof name === 'string' && name) names[tableKey(def)] = name;
    else
      Object.defineProperty(names, tableKey(def), {
        get() {
          throw new Error(`${def.envVar} is not set: the function's access does not name table ${def.id}`);
        },
      });
  }
  return names;
}

export interface StorageSettings {
  readonly region: string;
  /** DynamoDB Local's URL; unset in AWS. */
  readonly endpoint?: string;
  /** Per-attempt request timeout. */
  readonly timeoutMs: number;
  /** How long opening a connection may take. @default half of timeoutMs */
  readonly connectionTimeoutMs?: number;
  /** Attempts of each call but a counting write's (the `once` client makes one). @default 3 */
  readonly maxAttempts?: number;
  readonly tables: TableNames;
}

/** What every storage adapter is built on: the document client and the table names. */
export interface Storage {
  readonly ddb: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  /**
   * The same connection, with no SDK resend: for counting writes, where a resend after a lost answer could count a
   * request twice (the limiter treats a lost answer as used instead).
   */
  readonly once: { readonly ddb: DynamoDBClient; readonly doc: DynamoDBDocumentClient };
  readonly tables: TableNames;
}

const MAX_ATTEMPTS = 3;

/**
 * A storage operation (a function taking the storage first) as a method of one storage's adapter: how adapters build
 * their methods (`get: withStorage(storage, get)`).
 */
export const withStorage =
  <A extends unknown[], R>(storage: Storage, op: (storage: Storage, ...args: A) => R) =>
  (...args: A): R =>
    op(storage, ...args);

/** The DynamoDB clients, built once per function by its composition root and reused across invocations. */
export function createStorage(settings: StorageSettings): Storage {
  const config = {
    region: settings.region,
    maxAttempts: settings.maxAttempts ?? MAX_ATTEMPTS,
    // throwOnRequestTimeout: without it the handler only logs a warning and keeps waiting.
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMs ?? Math.ceil(settings.timeoutMs / 2),
      requestTimeout: settings.timeoutMs,
      throwOnRequestTimeout: true,
    },
    ...(settings.endpoint
      ? { endpoint: settings.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  };
  // One SigV4 signer for both clients, built at the first request. By default a client builds a new signer for every
  // request it signs (copying its whole resolved configuration each time); DynamoDB's signing name and region never
  // change, so one serves every request of both. It signs with the first client's resolved credentials, and hashes
  // with SigningSha256: the SDK's SHA-256 but for the form of an HMAC's key, about 13 µs less per HMAC (two per request).
  let signer: SignatureV4 | undefined;
  const sharedSigner = async (): Promise<SignatureV4> =>
    (signer ??= new SignatureV4({
      credentials: () => ddb.config.credentials(),
      region: settings.region,
      service: 'dynamodb',
      sha256: SigningSha256,
    }));
  const ddb = new DynamoDBClient({ ...config, signer: sharedSigner });
  const marshallOptions = { removeUndefinedValues: true };
  const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions });
  // Shares the first client's request handler (its sockets: no second connection to open on a cold start), its
  // credentials (one provider chain resolved and refreshed, not two) and the signer. Only the retry settings differ.
  const onceDdb = new DynamoDBClient({
    ...config,
    maxAttempts: 1,
    requestHandler: ddb.config.requestHandler,
    credentials: ddb.config.credentials,
    signer: sharedSigner,
  });
  const once = { ddb: onceDdb, doc: DynamoDBDocumentClient.from(onceDdb, { marshallOptions }) };
  return { ddb, doc, once, tables: settings.tables };
}

const UNAVAILABLE = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  // A transaction with the same client token is still running: the outcome is not known yet, so try later.
  'TransactionInProgressException',
  // A write met an item an admin's transaction holds (keys ban, unban, set-plan): not applied; try later.
  'TransactionConflictException',
  // The request's deadline (lambdas/storage/deadline.ts) aborted the call.
  'AbortError',
]);
/** Node.js socket and DNS errors: the database could not be reached, or the answer was lost. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENETRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
]);

function isUnavailable(err: unknown, depth = 0): boolean {
  const e = err as
    { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown } | undefined;
  if (!e || typeof e !== 'object') return false;
  return (
    UNAVAILABLE.has(e.name ?? '') ||
    NETWORK.has(e.code ?? '') ||
    (e.$metadata?.httpStatusCode ?? 0) >= 500 ||
    (depth < 3 && e.cause !== undefined && isUnavailable(e.cause, depth + 1))
  );
}

/** Maps SDK failures that mean "cannot serve now" to UnavailableError (503 + Retry-After); rethrows the rest. */
export function rethrowStorageError(err: unknown): never {
  if (isUnavailable(err)) {
    const e = err as { name?: string; code?: string };
    throw new UnavailableError(e.name === 'AbortError' ? 'Deadline' : (e.code ?? e.name ?? 'storage unavailable'));
  }
  throw err;
}

/**
 * Time kept back from ordinary calls near the request's deadline for the cleanup after a failed create (releasing
 * an Idempotency-Key claim), which runs with `cleanup: true` and may use it.
 */
export const CLEANUP_RESERVE_MS = 1_000;

/**
 * The signal that stops a call at its deadline, in the form the SDK reads without an event listener: it sets
 * `onabort` when it starts waiting (an attempt's request, the race of its retry token, the delay between attempts)
 * and reads `aborted`. Each call has its own: the form holds one handler, and the steps of one call run in turn.
 *
 * Not an AbortController's signal: on one, the SDK adds and removes an event listener twice per call (its retry
 * race and its HTTP request). With this form the handlers bench put createPet's warm CPU per call at 1.05x the
 * floor's instead of 1.07x (Enterprise key, 1 in flight; 1.04x instead of 1.06x at 16), in two A/B pairs of 8 and
 * 12 rounds. The SDK marks the form deprecated but reads it (`@smithy/types` AbortSignal); an SDK that stopped
 * reading it fails test/integration/deadline.test.ts, which cuts real SDK calls off with it.
 */
export interface DeadlineSignal {
  readonly aborted: boolean;
  onabort: (() => void) | null;
}

/** What `guarded` hands to `doc.send`: the signal that stops the call (SDK retries included) at the deadline. */
export interface SendOptions {
  readonly abortSignal?: DeadlineSignal;
}

/** A signal that reads aborted, and calls its handler, `ms` from now unless `stop` comes first. */
function deadlineSignal(ms: number): { readonly signal: DeadlineSignal; stop(): void } {
  const signal = { aborted: false, onabort: null as (() => void) | null };
  const timer = setTimeout(() => {
    signal.aborted = true;
    signal.onabort?.();
  }, ms);
  return { signal, stop: () => clearTimeout(timer) };
}

/**
 * Runs a storage call, mapping outage-type failures to UnavailableError. Inside a request, the call is aborted at
 * the request's deadline (less CLEANUP_RESERVE_MS unless `cleanup`), and not started when no time is left.
 */
export async function guarded<T>(fn: (options: SendOptions) => Promise<T>, { cleanup = false } = {}): Promise<T> {
  const left = timeLeft();
  const budget = left === undefined ? undefined : Math.floor(left - (cleanup ? 0 : CLEANUP_RESERVE_MS));
  if (budget !== undefined && budget <= 0) throw new UnavailableError('Deadline');
  // Not AbortSignal.timeout: its timer cannot be cancelled, so every call's signal would still fire seconds after
  // the call ended (a DOMException and an abort event each, seen in the warm path's profile: docs/performance.md).
  const deadline = budget === undefined ? undefined : deadlineSignal(budget);
  try {
    return await fn(deadline ? { abortSignal: deadline.signal } : {});
  } catch (err) {
    return rethrowStorageError(err);
  } finally {
    deadline?.stop();
  }
}

/**
 * Waits for work already under way (started outside any request, so no deadline bounds its calls) no longer than
 * the current request may: at the deadline, less CLEANUP_RESERVE_MS, it is UnavailableError('Deadline') as for
 * `guarded`, and the work goes on unwatched.
 */
export async function withinDeadline<T>(work: Promise<T>): Promise<T> {
  const left = timeLeft();
  if (left === undefined) return work;
  const budget = Math.floor(left - CLEANUP_RESERVE_MS);
  if (budget <= 0) throw new UnavailableError('Deadline');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnavailableError('Deadline')), budget);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The item returned with a failed condition (ReturnValuesOnConditionCheckFailure: ALL_OLD), as plain values: the
 * document client leaves it in attribute-value form. Undefined when no item existed.
 */
export function conditionFailedItem(err: ConditionalCheckFailedException): Record<string, unknown> | undefined {
  return err.Item ? unmarshall(err.Item) : undefined;
}
