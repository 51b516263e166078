/**
 * Creates the tables of tables.ts on a DynamoDB endpoint (DynamoDB Local for `npm start`, tests and benchmarks).
 * In AWS the CDK data construct creates them from the same definitions.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
} from '@aws-sdk/client-dynamodb';
import { TABLES, type TableDefinition } from '../../contract/tables.ts';
import { createStorage, tableNamesIn, type Storage } from './client.ts';

/** Physical names for a local prefix; the env vars the functions read them from. */
export function localTableEnv(prefix: string): Record<string, string> {
  return Object.fromEntries(TABLES.map((t) => [t.envVar, `${prefix}-${t.id}`]));
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/** The attribute definitions a table's key and every index's key need. */
function attributeDefinitions(def: TableDefinition): AttributeDefinition[] {
  const attrs = new Map<string, AttributeDefinition>();
  for (const k of [def.partitionKey, def.sortKey, ...def.indexes.flatMap((i) => [i.partitionKey, i.sortKey])]) {
    if (k) attrs.set(k.name, { AttributeName: k.name, AttributeType: k.type });
  }
  return [...attrs.values()];
}

const indexSpec = (i: TableDefinition['indexes'][number]) => ({
  IndexName: i.indexName,
  KeySchema: [
    { AttributeName: i.partitionKey.name, KeyType: 'HASH' as const },
    ...(i.sortKey ? [{ AttributeName: i.sortKey.name, KeyType: 'RANGE' as const }] : []),
  ],
  Projection: { ProjectionType: 'ALL' as const },
});

/**
 * A table kept from an earlier version (ANIMAL_STORE_DATA_DIR) gets the indexes added since, one UpdateTable each
 * (DynamoDB creates one index per call), as the stack's update adds them in AWS; items written before an index
 * existed are in it once rewritten (`npm run admin -- keys reindex --local` for the keys table).
 */
async function addMissingIndexes(client: DynamoDBClient, def: TableDefinition, name: string): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
  const have = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  for (const index of def.indexes.filter((i) => !have.has(i.indexName))) {
    await client.send(
      new UpdateTableCommand({
        TableName: name,
        AttributeDefinitions: attributeDefinitions(def),
        GlobalSecondaryIndexUpdates: [{ Create: indexSpec(index) }],
      }),
    );
    await indexActive(client, name, index.indexName);
  }
}

/** Waits until an index being created is ACTIVE: DynamoDB creates one index at a time per table. */
async function indexActive(client: DynamoDBClient, table: string, indexName: string): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 250) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    const index = Table?.GlobalSecondaryIndexes?.find((i) => i.IndexName === indexName);
    if (index?.IndexStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`index ${indexName} of ${table} did not become ACTIVE within 2 minutes`);
}

async function createTable(client: DynamoDBClient, def: TableDefinition, name: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributeDefinitions(def),
        KeySchema: [
          { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
          ...(def.sortKey ? [{ AttributeName: def.sortKey.name, KeyType: 'RANGE' as const }] : []),
        ],
        ...(def.indexes.length ? { GlobalSecondaryIndexes: def.indexes.map(indexSpec) } : {}),
      }),
    );
    if (def.ttlAttribute) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: def.ttlAttribute, Enabled: true },
        }),
      );
    }
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err; // kept data (ANIMAL_STORE_DATA_DIR): tables exist
    await addMissingIndexes(client, def, name);
  }
}

/** Creates every table under `prefix` (idempotent) and returns the env vars that point the functions at them. */
export async function provisionLocalTables(endpoint: string, prefix: string): Promise<Record<string, string>> {
  const client = localClient(endpoint);
  const env = localTableEnv(prefix);
  try {
    await Promise.all(TABLES.map((t) => createTable(client, t, env[t.envVar]!)));
  } finally {
    client.destroy();
  }
  return env;
}

/** Storage on DynamoDB Local, for tools and tests that write tables directly (keys, fixtures). */
export function localStorage(endpoint: string, tableEnv: Readonly<Record<string, string>>): Storage {
  return createStorage({ region: 'us-east-1', endpoint, timeoutMs: 8_000, tables: tableNamesIn(tableEnv) });
}
