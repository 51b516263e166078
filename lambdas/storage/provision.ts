/**
 * Creates the tables of tables.ts on a DynamoDB endpoint (DynamoDB Local for `npm start`, tests and benchmarks).
 * In AWS the CDK data construct creates them from the same definitions.
 */
import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
} from '@aws-sdk/client-dynamodb';
import { TABLES, type TableDefinition } from '../../contract/tables.ts';

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

async function createTable(client: DynamoDBClient, def: TableDefinition, name: string): Promise<void> {
  const attrs = new Map<string, AttributeDefinition>();
  for (const k of [def.partitionKey, def.sortKey, ...def.indexes.flatMap((i) => [i.partitionKey, i.sortKey])]) {
    if (k) attrs.set(k.name, { AttributeName: k.name, AttributeType: k.type });
  }
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attrs.values()],
        KeySchema: [
          { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
          ...(def.sortKey ? [{ AttributeName: def.sortKey.name, KeyType: 'RANGE' as const }] : []),
        ],
        ...(def.indexes.length
          ? {
              GlobalSecondaryIndexes: def.indexes.map((i) => ({
                IndexName: i.indexName,
                KeySchema: [
                  { AttributeName: i.partitionKey.name, KeyType: 'HASH' as const },
                  ...(i.sortKey ? [{ AttributeName: i.sortKey.name, KeyType: 'RANGE' as const }] : []),
                ],
                Projection: { ProjectionType: 'ALL' as const },
              })),
            }
          : {}),
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
