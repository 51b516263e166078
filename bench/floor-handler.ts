/**
 * The cold-start and bundle floor: the libraries every function is built on (the DynamoDB DocumentClient, zod/mini
 * with its English messages, @middy/core with @middy/http-json-body-parser, Powertools Logger and Metrics with their
 * middlewares) making the same DynamoDB requests as the function's first invoke, as directly as they can be made.
 * One bundle serves every function (so its bytes are one figure); FLOOR_OF (an operationId, or `authorizer`) picks
 * the requests:
 *   authorizer  one BatchGetItem of the key and its standing (as lambdas/storage/standing.ts), no middy
 *   an operation  the count (the limiter's conditional UpdateItem on the day item of a random one of the key's shards,
 *               FLOOR_SHARDS, opening the minute with its usage-history write when the stored minute is older, as
 *               lambdas/storage/limit-store.ts) and its own
 *               request (bench/floors.ts: GetItem for getPet, Scan with Limit for listPets, the id block's
 *               UpdateItem at init and a conditional PutItem after the count for createPet, none for listOrders' 501)
 * It writes the metric lines the function must write on that call (FLOOR_COUNTS: a deprecated operation's, a 501's).
 * What a function spends beyond this is its own code: the envelope, the limiter's rules, the error mapping.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { FLOOR_OF, T, doc, env, logger, metrics, readKey, floorOperation } from './floor-common.ts';
import { floorOf, runFloor, type OperationFloor } from './floors.ts';

const SHARDS = Number(env.FLOOR_SHARDS ?? 1);
/** The operation whose requests this floor makes (bench/floors.ts); none for the authorizer. */
const floor: OperationFloor | undefined = FLOOR_OF === 'authorizer' ? undefined : floorOf(FLOOR_OF);

/** The floor's ids, far from the allocator's and the seeded ones (bench/lib/seed.ts). */
const FLOOR_IDS = 3_000_000_000;
/** The id block a create reserves at init, as the id allocator does (one UpdateItem). */
const ids = floor?.assignsIds
  ? doc
      .send(
        new UpdateCommand({
          TableName: T.state,
          Key: { pk: 'floor#ids' },
          UpdateExpression: 'ADD n :b',
          ExpressionAttributeValues: { ':b': 100 },
          ReturnValues: 'UPDATED_NEW',
        }),
      )
      .then((o) => Number(o.Attributes?.n) - 100)
  : undefined;
const newId = async () => FLOOR_IDS + (await ids!) + 1 + Math.floor(Math.random() * 99);

/** The limiter's count: one conditional write in the open minute, or the minute's opening and its history. */
async function count(keyId: string): Promise<void> {
  const now = Date.now();
  const minute = Math.floor(now / 60_000) * 60;
  // A random one of the key's shards, as the limiter takes a lease from (FLOOR_SHARDS, from the bench: the shards of
  // the event's key); one item for an exact key. With one item where the function has six, the function opened a
  // minute on a cold start more often than its floor, one more round trip in sequence.
  const shard = Math.floor(Math.random() * SHARDS);
  const pk = `rlfloor#${keyId}#${Math.floor(now / 86_400_000) * 86_400}#${shard}`;
  try {
    await doc.send(
      new UpdateCommand({
        TableName: T.state,
        Key: { pk },
        UpdateExpression: 'ADD m :n, d :n',
        ConditionExpression: 'ms = :ms AND m <= :mmax',
        ExpressionAttributeValues: { ':n': 1, ':ms': minute, ':mmax': 1_000_000 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    await Promise.all([
      doc.send(
        new UpdateCommand({
          TableName: T.state,
          Key: { pk: `rlhfloor#${pk}#${minute - (minute % 3600)}` },
          UpdateExpression: 'SET #m = :d',
          ExpressionAttributeNames: { '#m': `m${(minute % 3600) / 60}` },
          ExpressionAttributeValues: { ':d': 1 },
        }),
      ),
      doc.send(
        new UpdateCommand({
          TableName: T.state,
          Key: { pk },
          UpdateExpression: 'SET ms = :ms, m = :n ADD d :n',
          ExpressionAttributeValues: { ':ms': minute, ':n': 1 },
        }),
      ),
    ]);
  }
}

type ProxyEvent = {
  body: unknown;
  pathParameters?: Record<string, string> | null;
  queryStringParameters?: Record<string, string> | null;
  requestContext?: { authorizer?: { keyId?: string } };
};

/** The operation's floor (bench/floors.ts) around the count. */
const operation = floorOperation(async (e: ProxyEvent) => {
  const req = {
    params: e.pathParameters ?? {},
    query: e.queryStringParameters ?? {},
    body: e.body,
    keyId: e.requestContext?.authorizer?.keyId ?? 'floor',
  };
  floor!.check?.(req);
  const answer = await runFloor(floor!, req, { doc, tables: T, newId }, () => count(req.keyId).then(() => true));
  return { statusCode: answer.status, body: JSON.stringify(answer.body) };
});

async function authorizer(event: { authorizationToken: string }, context: { functionName: string }) {
  logger.addContext(context as never);
  const item = await readKey(event.authorizationToken);
  metrics.addMetric(item ? 'Allowed' : 'Denied', MetricUnit.Count, 1);
  metrics.publishStoredMetrics();
  if (!item?.keyId) throw new Error('Unauthorized');
  return { principalId: item.keyId, policyDocument: { Version: '2012-10-17', Statement: [] } };
}

export const handler = FLOOR_OF === 'authorizer' ? authorizer : operation;
