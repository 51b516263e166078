/**
 * Tables kept from an earlier version (ANIMAL_STORE_DATA_DIR) get the indexes added since: a keys table made before
 * the listing index has it after the next start, so `keys list` does not fail on a missing index. As a developer
 * meets it: DynamoDB Local on a data folder, a table made by an earlier version, a restart, `npm start`'s
 * provisioning. (An engine of its own: the index is built by the engine in the background, and the suite's shared
 * engine, after hundreds of tables, was seen to leave it CREATING.)
 */
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TABLES } from '../../contract/tables.ts';
import { localClient, localTableEnv, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { startDynamoLocal } from '../../lib/local/dynamodb.ts';

it("adds a kept table's missing indexes at start", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-kept-'));
  const prefix = 'kept';
  const keys = TABLES.find((t) => t.id === 'ApiKeys')!;
  const name = localTableEnv(prefix)[keys.envVar]!;
  try {
    // As an earlier version made it: the key alone, no index.
    let engine = await startDynamoLocal({ dataDir });
    let client = localClient(engine.endpoint);
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: keys.partitionKey.name, AttributeType: keys.partitionKey.type }],
        KeySchema: [{ AttributeName: keys.partitionKey.name, KeyType: 'HASH' }],
      }),
    );
    client.destroy();
    await engine.stop();
    // The next start on the same folder.
    engine = await startDynamoLocal({ dataDir });
    client = localClient(engine.endpoint);
    try {
      await provisionLocalTables(engine.endpoint, prefix);
      const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
      expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => [i.IndexName, i.IndexStatus]).sort()).toEqual(
        keys.indexes.map((i) => [i.indexName, 'ACTIVE']).sort(),
      );
      // Idempotent: a second start finds nothing to add.
      await provisionLocalTables(engine.endpoint, prefix);
    } finally {
      client.destroy();
      await engine.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
