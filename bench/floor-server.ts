/**
 * The warm-path floor: a plain node:http server (no framework, no validation library, no gateway emulation) that
 * does the DynamoDB work the API does for the same request, as directly as it can be done:
 *   auth     on a token not seen in the authorizer's cache TTL: one BatchGetItem of the key and its standing (as the
 *            authorizer does; API Gateway and the local gateway cache its answer per token for that TTL)
 *   limiter  a key up to LIMITER.exactPerMinute (Free, Pro, Business): one conditional UpdateItem per request on the
 *            key's day item, opening the minute (plus its usage-history write) when the condition says it moved on;
 *            a larger key (Enterprise): a lease of the same size the API takes (leaseSize), from a random shard,
 *            with the same conditional write, admitted locally until spent or LIMITER.leaseTtlMs old
 *   op       every declared operation, routed from the route table by its path template and method
 *            (bench/lib/floor-router.ts) to its floor (bench/floors.ts: Scan/Query with Limit, a conditional PutItem,
 *            GetItem, or nothing but the count for a 501); a read starts beside the limiter's write, a create counts
 *            first (as lambdas/shared/admission.ts). A path no route has answers 404, a method none of its routes
 *            has 405
 * Its limiter items have a prefix of their own (`rlfloor#`), so it never shares a budget with the API.
 *   node bench/floor-server.ts <dynamoEndpoint> <tablePrefix> <authTtlSeconds>
 * Prints {"url", "statsUrl"} once listening; GET statsUrl answers {"ddb": DynamoDB requests made so far, "cpuMicros": the
 * process's CPU time}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PLANS, type PlanLimits, type PlanName } from '../contract/plans.ts';
import { BASE_PATH, ROUTES } from '../contract/routes.ts';
import { floorLimiter, type Caller } from './floor-limiter.ts';
import { FLOORS, runFloor, tablesIn } from './floors.ts';
import { floorRouter } from './lib/floor-router.ts';
import { localTableEnv } from '../lambdas/storage/provision.ts';
import { startStatsServer } from './lib/stats-server.ts';

const [endpoint, prefix, ttlArg] = process.argv.slice(2);
const AUTH_TTL_MS = Number(ttlArg ?? 60) * 1000;
const T = tablesIn(localTableEnv(prefix!));
const ddb = new DynamoDBClient({
  region: 'us-east-1',
  endpoint: endpoint!,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } });
/** Every declared operation, by its path template and method (bench/lib/floor-router.ts). */
const route = floorRouter(ROUTES, FLOORS);
let ddbRequests = 0;
ddb.middlewareStack.add((next) => (args) => (ddbRequests++, next(args)), { step: 'initialize', name: 'count' });
/** Ids for creates: a range of its own per process, far from the allocator's and the seeded ones. */
let nextId = 2_000_000_000 + (process.pid % 1000) * 1_000_000;

const authCache = new Map<string, { caller: Caller | undefined; expires: number }>();

async function authorize(token: string): Promise<Caller | undefined> {
  const hit = authCache.get(token);
  if (hit && hit.expires > Date.now()) return hit.caller;
  const hash = createHash('sha256').update(token).digest('hex');
  // The key record and its standing in one BatchGetItem, as the authorizer reads them (lambdas/storage/standing.ts).
  const out = await doc.send(
    new BatchGetCommand({
      RequestItems: {
        [T.keys]: { Keys: [{ hash }], ConsistentRead: true },
        [T.state]: { Keys: [{ pk: `ks#${hash}` }], ConsistentRead: true },
      },
    }),
  );
  const item = out.Responses?.[T.keys]?.[0] as
    { keyId: string; plan: PlanName; limits?: PlanLimits; status: string } | undefined;
  const standing = out.Responses?.[T.state]?.[0] as { banUntil?: number } | undefined;
  const limits = item?.limits ?? (item ? PLANS[item.plan].limits : undefined);
  const banned = (standing?.banUntil ?? 0) > Date.now() / 1000;
  const caller: Caller | undefined =
    item?.status === 'active' && limits && !banned ? { keyId: item.keyId, limits } : undefined;
  authCache.set(token, { caller, expires: Date.now() + AUTH_TTL_MS });
  return caller;
}

const { admit } = floorLimiter(doc, T.state);
const deps = { doc, tables: T, newId: async () => nextId++ };

function json(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(s) });
  res.end(s);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const caller = token ? await authorize(token) : undefined;
  if (!caller) return json(res, 401, { code: 'unauthorized' });
  const path = url.pathname.startsWith(`${BASE_PATH}/`) ? url.pathname.slice(BASE_PATH.length) : undefined;
  const routed = path === undefined ? ({ status: 404 } as const) : route(req.method ?? 'GET', path);
  if ('status' in routed)
    return json(res, routed.status, { code: routed.status === 404 ? 'not_found' : 'method_not_allowed' });
  const request = {
    params: routed.params,
    query: Object.fromEntries(url.searchParams),
    body: chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined,
    keyId: caller.keyId,
  };
  const answer = await runFloor(routed.floor, request, deps, () => admit(caller));
  return json(res, answer.status, answer.body);
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => (res.headersSent ? res.destroy() : json(res, 500, { code: 'internal_error' })));
});
server.keepAliveTimeout = 65_000;
const statsUrl = await startStatsServer(() => ({ ddb: ddbRequests }));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1`, statsUrl })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
