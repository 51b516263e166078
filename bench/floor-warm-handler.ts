/**
 * The warm floor of the per-handler comparison (bench/phases/handlers.ts): a Lambda handler built on the libraries
 * every function is built on (the DynamoDB DocumentClient, zod/mini with its English messages, @middy/core with
 * @middy/http-json-body-parser for a create, Powertools Logger and Metrics with their middlewares), making the same
 * DynamoDB requests per call as the deployed function does warm, as directly as they can be made:
 * and writing the same metric lines per call (a deprecated operation's call, a 501: FLOOR_COUNTS):
 *   authorizer    one BatchGetItem of the key and its standing per call (in-process, nothing caches it)
 *   an operation  the limiter's count (bench/floor-limiter.ts: exact keys one conditional write, Enterprise keys a
 *                 lease) and its own request: GetItem (getPet), Scan or the status index's Query with Limit
 *                 (listPets), a conditional PutItem after the count (createPet), none (listOrders: 501); a read
 *                 starts beside the count, a create counts first (as lambdas/shared/admission.ts)
 * Bundled with the stack's esbuild settings like the functions; FLOOR_OF (an operationId, or `authorizer`) picks
 * the requests. Unlike bench/floor-handler.ts (the cold and bytes floor) it carries the lease path, which a warm
 * Enterprise key takes and a cold start's single call does not need.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod/mini';
import type { OperationId } from '../contract/routes.ts';
import {
  FLOOR_OF,
  Limit,
  NewPet,
  PetId,
  Status,
  T,
  doc,
  logger,
  metrics,
  readKey,
  floorOperation,
} from './floor-common.ts';
import { floorLimiter } from './floor-limiter.ts';
import { createPetCommand, listPetsCommand } from './floor-requests.ts';

const { admit } = floorLimiter(doc, T.state);
const Query = z.object({ limit: Limit, status: z.optional(Status) });

/** Ids for creates: a range of their own per process, far from the allocator's and the seeded ones. */
let nextId = 3_000_000_000 + (process.pid % 1000) * 1_000_000;

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
const RATE_LIMITED = json(429, { code: 'rate_limited' });

// By operation, so the compiler names a new operation's floor requests, which are written by hand: they are the floor.
const operations: Record<OperationId, (e: ProxyEvent) => Promise<Result>> = {
  async getPet(e) {
    const { petId } = PetId.parse(e.pathParameters ?? {});
    const [admitted, out] = await Promise.all([
      admit(callerOf(e)),
      doc.send(new GetCommand({ TableName: T.pets, Key: { id: Number(petId) } })),
    ]);
    if (!admitted) return RATE_LIMITED;
    return out.Item ? json(200, out.Item) : json(404, { code: 'not_found' });
  },
  async listPets(e) {
    const { limit, status } = Query.parse(e.queryStringParameters ?? {});
    const [admitted, out] = await Promise.all([
      admit(callerOf(e)),
      doc.send(listPetsCommand(T.pets, Number(limit ?? 20), status)),
    ]);
    if (!admitted) return RATE_LIMITED;
    return json(200, out.Items ?? []);
  },
  async createPet(e) {
    const body = NewPet.parse(e.body);
    if (!(await admit(callerOf(e)))) return RATE_LIMITED;
    const pet = { id: nextId++, ...body, status: body.status ?? 'available' };
    await doc.send(createPetCommand(T.pets, pet, callerOf(e).keyId));
    return json(201, pet);
  },
  async listOrders(e) {
    if (!(await admit(callerOf(e)))) return RATE_LIMITED;
    return json(501, { code: 'not_implemented' });
  },
};

const operation = floorOperation((event: ProxyEvent) => operations[FLOOR_OF as OperationId](event));

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
