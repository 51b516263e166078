/**
 * The warm-path floor: a plain node:http server (no framework, no validation library, no Powertools) that makes the
 * same DynamoDB calls the API makes for each operation, one after the other:
 *   auth     GetItem on the keys table (the authorizer's lookup, uncached as in the local gateway)
 *   limiter  the conditional UpdateItem of the limiter's common path (opening the minute when it fails)
 *   op       Scan/Query with Limit, PutItem (conditional), or GetItem
 *   node bench/floor-server.ts <dynamoEndpoint> <tablePrefix>
 * Prints {"url": …} once listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { localTableEnv } from '../lambdas/storage/provision.ts';

const [endpoint, prefix] = process.argv.slice(2);
const env = localTableEnv(prefix!);
const T = { pets: env.PETS_TABLE_NAME!, keys: env.KEYS_TABLE_NAME!, state: env.STATE_TABLE_NAME! };
const doc = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: 'us-east-1',
    endpoint: endpoint!,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);
/** Ids for creates: a range of its own per process, far from the allocator's and the seeded ones. */
let nextId = 2_000_000_000 + (process.pid % 1000) * 1_000_000;

function json(res: ServerResponse, status: number, body: unknown): void {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(s) });
  res.end(s);
}

async function limiter(subject: string): Promise<void> {
  const nowSec = Math.floor(Date.now() / 1000);
  const ms = nowSec - (nowSec % 60);
  const Key = { pk: `rlfloor#${subject}#${nowSec - (nowSec % 86_400)}` };
  try {
    await doc.send(
      new UpdateCommand({
        TableName: T.state,
        Key,
        UpdateExpression: 'ADD m :one, d :one',
        ConditionExpression: 'ms = :ms AND m < :mlim AND d < :dlim',
        ExpressionAttributeValues: { ':one': 1, ':ms': ms, ':mlim': 1e9, ':dlim': 1e12 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
  } catch {
    await doc.send(
      new UpdateCommand({
        TableName: T.state,
        Key,
        UpdateExpression: 'SET ms = :ms, m = :one ADD d :one',
        ExpressionAttributeValues: { ':one': 1, ':ms': ms },
      }),
    );
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token) return json(res, 401, { code: 'unauthorized' });
  const key = await doc.send(
    new GetCommand({
      TableName: T.keys,
      Key: { hash: createHash('sha256').update(token).digest('hex') },
      ConsistentRead: true,
    }),
  );
  if (!key.Item) return json(res, 401, { code: 'unauthorized' });
  await limiter(String(key.Item.keyId));
  const m = /^\/v1\/pets(?:\/(\d+))?$/.exec(url.pathname);
  if (!m) return json(res, 404, { code: 'not_found' });
  if (req.method === 'GET' && m[1]) {
    const out = await doc.send(new GetCommand({ TableName: T.pets, Key: { id: Number(m[1]) } }));
    return out.Item ? json(res, 200, out.Item) : json(res, 404, { code: 'not_found' });
  }
  if (req.method === 'GET') {
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const status = url.searchParams.get('status');
    const out = await doc.send(
      status
        ? new QueryCommand({
            TableName: T.pets,
            IndexName: 'byStatus',
            KeyConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': status },
            Limit: limit,
          })
        : new ScanCommand({ TableName: T.pets, Limit: limit }),
    );
    return json(res, 200, out.Items ?? []);
  }
  if (req.method === 'POST') {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      name: string;
      categoryId: number;
      status?: string;
    };
    const pet = { id: nextId++, name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' };
    await doc.send(new PutCommand({ TableName: T.pets, Item: pet, ConditionExpression: 'attribute_not_exists(id)' }));
    return json(res, 201, pet);
  }
  return json(res, 405, { code: 'method_not_allowed' });
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => (res.headersSent ? res.destroy() : json(res, 500, { code: 'internal_error' })));
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1` })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
