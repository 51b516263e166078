/**
 * `npm start`: the whole API on http://localhost:3000/v1 (PORT overrides) over an embedded DynamoDB Local.
 *   ANIMAL_STORE_DEV_KEYS="<key>:<plan>,…"   keys to accept (plans free, pro, business); default: one new Free key
 *   ANIMAL_STORE_DATA_DIR=.data               keep data on disk across restarts (default: in memory)
 *   ANIMAL_STORE_DYNAMODB_PORT=8000           DynamoDB Local's port (the admin tool's --local target)
 *   ANIMAL_STORE_DYNAMODB_ENDPOINT=<url>      use this DynamoDB endpoint instead of starting DynamoDB Local
 *   ANIMAL_STORE_TABLE_PREFIX=animal-store-local   physical table name prefix (shared with the admin tool)
 *   ANIMAL_STORE_AUTH_CACHE_TTL=<seconds>     authorizer cache (default: the template's, 60; 0 shows revocations at once)
 *   LOG_LEVEL=DEBUG|INFO|WARN|ERROR|SILENT    the functions' log level (default WARN)
 * The gateway is the synthesized staging stack (lib/local/synth.ts): routes, authorizer, usage plans, gateway
 * responses, MOCK methods and the functions' environment come from its template.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateKey } from '../lambdas/domain/keys.ts';
import { parseDevKeys, startLocalApi } from '../lib/local/app.ts';

const port = Number(process.env.PORT ?? 3000);
const dynamoPort = Number(process.env.ANIMAL_STORE_DYNAMODB_PORT ?? 8000);
const dataDir = process.env.ANIMAL_STORE_DATA_DIR ? resolve(process.env.ANIMAL_STORE_DATA_DIR) : undefined;
if (dataDir) mkdirSync(dataDir, { recursive: true });
const dynamoEndpoint = process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT || undefined;
if (dynamoEndpoint && !/^https?:\/\/[^/]+/.test(dynamoEndpoint))
  throw new Error(`ANIMAL_STORE_DYNAMODB_ENDPOINT must be an http(s) URL: "${dynamoEndpoint}"`);
const given = process.env.ANIMAL_STORE_DEV_KEYS;
const devKeys = given ? parseDevKeys(given) : [{ key: generateKey(), plan: 'free' as const }];

const api = await startLocalApi({
  port,
  host: process.env.HOST ?? '127.0.0.1',
  dynamoEndpoint,
  dynamoPort,
  dataDir,
  tablePrefix: process.env.ANIMAL_STORE_TABLE_PREFIX || undefined,
  devKeys,
  authCacheTtlSeconds: process.env.ANIMAL_STORE_AUTH_CACHE_TTL
    ? Number(process.env.ANIMAL_STORE_AUTH_CACHE_TTL)
    : undefined,
  env: process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {},
});
const url = api.url.replace('127.0.0.1', 'localhost');
console.log(`Animal Store API listening on ${url}`);
console.log(
  api.dynamo
    ? `DynamoDB Local on ${api.dynamoEndpoint} (${dataDir ? `data in ${dataDir}` : 'in memory'})`
    : `DynamoDB at ${api.dynamoEndpoint} (ANIMAL_STORE_DYNAMODB_ENDPOINT; tables created if missing)`,
);
for (const k of devKeys)
  console.log(
    `API key (${k.plan}): ${k.key}${api.inactiveDevKeys.includes(k) ? ' (revoked in ANIMAL_STORE_DATA_DIR: stays revoked, answered 401)' : ''}`,
  );
console.log(`Try: curl -i -H "Authorization: Bearer ${devKeys[0]!.key}" ${url}/pets`);
console.log(
  api.dynamo
    ? 'Ctrl-C stops the API and DynamoDB Local.'
    : 'Ctrl-C stops the API (the DynamoDB endpoint keeps running).',
);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await api.close();
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
