/**
 * The warm floor of the per-handler comparison (bench/phases/handlers.ts): a Lambda handler built on the libraries
 * every function is built on (the DynamoDB DocumentClient, zod/mini with its English messages, @middy/core with
 * @middy/http-json-body-parser for a create, Powertools Logger and Metrics with their middlewares), making the same
 * DynamoDB requests per call as the deployed function does warm, as directly as they can be made:
 * and writing the same metric lines per call (a deprecated operation's call, a 501: FLOOR_COUNTS):
 *   authorizer    one BatchGetItem of the key and its standing per call (in-process, nothing caches it)
 *   an operation  the limiter's count (bench/floor-limiter.ts: exact keys one conditional write, Enterprise keys a
 *                 lease) and its own request (bench/floors.ts: GetItem for getPet, Scan or the status index's Query
 *                 with Limit for listPets, a conditional PutItem after the count for createPet, none for
 *                 listOrders' 501); a read starts beside the count, a create counts first (as
 *                 lambdas/shared/admission.ts)
 * Bundled with the stack's esbuild settings like the functions; FLOOR_OF (an operationId, or `authorizer`) picks
 * the requests. Unlike bench/floor-handler.ts (the cold and bytes floor) it carries the lease path, which a warm
 * Enterprise key takes and a cold start's single call does not need.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { FLOOR_OF, T, doc, logger, metrics, readKey, floorOperation } from './floor-common.ts';
import { floorLimiter } from './floor-limiter.ts';
import { floorOf, runFloor, type OperationFloor } from './floors.ts';

const { admit } = floorLimiter(doc, T.state);
/** The operation whose requests this floor makes (bench/floors.ts); none for the authorizer. */
const floor: OperationFloor | undefined = FLOOR_OF === 'authorizer' ? undefined : floorOf(FLOOR_OF);

/** Ids for creates: a range of their own per process, far from the allocator's and the seeded ones. */
let nextId = 3_000_000_000 + (process.pid % 1000) * 1_000_000;
const deps = { doc, tables: T, newId: async () => nextId++ };

type ProxyEvent = {
  body: unknown;
  pathParameters?: Record<string, string> | null;
  queryStringParameters?: Record<string, string> | null;
  requestContext?: { authorizer?: { keyId?: string; perMinute?: string | number; perDay?: string | number } };
};
type Result = { statusCode: number; headers: Record<string, string>; body: string };
const json = (statusCode: number, body: unknown): Result => ({
  statusCode,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});
const callerOf = (e: ProxyEvent) => {
  const a = e.requestContext?.authorizer ?? {};
  return { keyId: a.keyId ?? 'floor', limits: { perMinute: Number(a.perMinute), perDay: Number(a.perDay) } };
};

/** The operation's floor (bench/floors.ts) around the limiter's count. */
async function serve(e: ProxyEvent): Promise<Result> {
  const caller = callerOf(e);
  const req = {
    params: e.pathParameters ?? {},
    query: e.queryStringParameters ?? {},
    body: e.body,
    keyId: caller.keyId,
  };
  floor!.check?.(req);
  const answer = await runFloor(floor!, req, deps, () => admit(caller));
  return json(answer.status, answer.body);
}

const operation = floorOperation(serve);

async function authorizer(event: { authorizationToken: string; methodArn: string }, context: { functionName: string }) {
  logger.addContext(context as never);
  metrics.captureColdStartMetric(context.functionName);
  const item = await readKey(event.authorizationToken);
  if (!item?.keyId) {
    // A denial is counted, as the function counts it; an allowed call publishes nothing.
    metrics.addMetric('Denied', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    throw new Error('Unauthorized');
  }
  return {
    principalId: item.keyId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
    },
    context: { keyId: item.keyId, plan: item.plan },
  };
}

export const handler = FLOOR_OF === 'authorizer' ? authorizer : operation;
