/**
 * What both Lambda floors share (bench/floor-handler.ts, the cold and bytes floor; bench/floor-warm-handler.ts, the
 * warm one): the DocumentClient on the function's environment, `zod/mini` with its English messages (each
 * operation's request schemas are its floor's, bench/floors.ts), every declared table's name, the authorizer's key
 * read, and Powertools Logger and Metrics configured as a careful user would, and as the functions are
 * (lambdas/shared/observability.ts): a correlation id search function (without one, Powertools warns on every
 * invocation that correlationIdPath is set) and the Metrics' "no application metrics" warning, the normal case of
 * most invocations, left unwritten. At their defaults the floors wrote two warning lines per
 * invocation that the functions do not write.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { floorOf, tablesIn } from './floors.ts';

z.config(en());

export const env = process.env;
/** Whose requests the floor makes: an operationId, or `authorizer`. */
export const FLOOR_OF = env.FLOOR_OF ?? 'getPet';
const endpoint = env.DYNAMODB_ENDPOINT;
const ddb = new DynamoDBClient({
  region: env.AWS_REGION ?? 'us-east-1',
  ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
});
export const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } });
/** Every declared table's physical name, by its key in the storage's names (`T.pets`, `T.state`). */
export const T = tablesIn(env);

export const logger = new Logger({
  serviceName: 'floor',
  logLevel: (env.LOG_LEVEL ?? 'WARN') as 'WARN',
  correlationIdSearchFn: (path: string, data: unknown) =>
    path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], data),
});
export const metrics = new Metrics({
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

/**
 * The metric lines a function must write on every call of its operation, which the floors write too (FLOOR_COUNTS,
 * comma-separated, from the bench: `floorCounts` in bench/lib/function-env.ts): a deprecated operation's
 * `DeprecatedOperationCall` and a 501's `NotImplemented`, each one EMF line by operation, Powertools' own way (a
 * second instance, built at the first such line). Without them a floor wrote fewer lines per call than the function.
 */
const COUNTS = (env.FLOOR_COUNTS ?? '').split(',').filter(Boolean);
let perOperation: Metrics | undefined;
export function writeOperationCounts(): void {
  for (const name of COUNTS) {
    perOperation ??= new Metrics({ namespace: 'Floor', serviceName: 'floor', defaultDimensions: { stage: 'local' } });
    perOperation.addDimensions({ operation: FLOOR_OF });
    perOperation.addMetric(name, MetricUnit.Count, 1);
    perOperation.publishStoredMetrics();
  }
}

/**
 * An operation's handler as both floors wrap it, as the functions are: Powertools' context and metrics middlewares,
 * the JSON body parser for an operation that takes a body, and the operation's own metric lines before its work.
 */
export function floorOperation<E extends { body?: unknown }, R>(run: (event: E) => Promise<R>) {
  return middy<E>()
    .use(injectLambdaContext(logger, { correlationIdPath: 'requestContext.requestId' }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use(FLOOR_OF !== 'authorizer' && floorOf(FLOOR_OF).jsonBody ? [httpJsonBodyParser()] : [])
    .handler(async (event: E) => {
      writeOperationCounts();
      return run(event);
    });
}

/** The authorizer's read: the key record and its standing in one BatchGetItem (as lambdas/storage/standing.ts). */
export async function readKey(authorizationToken: string): Promise<{ keyId?: string; plan?: string } | undefined> {
  const hash = createHash('sha256')
    .update(authorizationToken.replace(/^Bearer /, ''))
    .digest('hex');
  const out = await doc.send(
    new BatchGetCommand({
      RequestItems: {
        [T.keys]: { Keys: [{ hash }], ConsistentRead: true },
        [T.state]: { Keys: [{ pk: `ks#${hash}` }], ConsistentRead: true },
      },
    }),
  );
  return out.Responses?.[T.keys]?.[0] as { keyId?: string; plan?: string } | undefined;
}
