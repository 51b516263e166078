/**
 * The one DynamoDB client, created at module scope and reused across invocations. Only lambdas/storage imports
 * the AWS SDK. Timeouts and attempts are bounded well under API Gateway's 29 s integration timeout, so an
 * unreachable database gives a prompt 503, never a hang.
 */
import { DynamoDBClient, type ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../shared/config.ts';
import { UnavailableError } from '../domain/errors.ts';

export const TIMEOUTS = {
  connectionMs: Math.ceil(config.DYNAMODB_TIMEOUT_MS / 2),
  requestMs: config.DYNAMODB_TIMEOUT_MS,
  maxAttempts: 3,
} as const;

export const ddb = new DynamoDBClient({
  region: config.AWS_REGION,
  maxAttempts: TIMEOUTS.maxAttempts,
  // throwOnRequestTimeout: without it the handler only logs a warning and keeps waiting.
  requestHandler: { connectionTimeout: TIMEOUTS.connectionMs, requestTimeout: TIMEOUTS.requestMs, throwOnRequestTimeout: true },
  ...(config.DYNAMODB_ENDPOINT
    ? { endpoint: config.DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : {}),
});

export const doc = DynamoDBDocumentClient.from(ddb, {
  marshallOptions: { removeUndefinedValues: true },
});

export const tableNames = {
  pets: config.PETS_TABLE_NAME,
  keys: config.KEYS_TABLE_NAME,
  state: config.STATE_TABLE_NAME,
} as const;

const UNAVAILABLE = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/** Maps SDK failures that mean "cannot serve now" to UnavailableError (503 + Retry-After); rethrows the rest. */
export function rethrowStorageError(err: unknown): never {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (
    UNAVAILABLE.has(e?.name ?? '') ||
    NETWORK.has(e?.code ?? '') ||
    (e?.$metadata?.httpStatusCode ?? 0) >= 500
  ) {
    throw new UnavailableError(e?.name ?? e?.code ?? 'storage unavailable');
  }
  throw err;
}

/** Runs a storage call, mapping outage-type failures to UnavailableError. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    return rethrowStorageError(err);
  }
}

/**
 * The item returned with a failed condition (ReturnValuesOnConditionCheckFailure: ALL_OLD), as plain values: the
 * document client leaves it in attribute-value form. Undefined when no item existed.
 */
export function conditionFailedItem(err: ConditionalCheckFailedException): Record<string, unknown> | undefined {
  return err.Item ? unmarshall(err.Item) : undefined;
}
