/**
 * Tables kept from an earlier version (ANIMAL_STORE_DATA_DIR) get the indexes added since: a keys table made before
 * the listing index has it after the next start, so `keys list` does not fail on a missing index.
 */
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { expect, inject, it } from 'vitest';
import { TABLES } from '../../contract/tables.ts';
import { localClient, localTableEnv, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';

it("adds a kept table's missing indexes at start, keeping its data's table", async () => {
  const endpoint = inject('dynamoEndpoint');
  const prefix = uniquePrefix();
  const keys = TABLES.find((t) => t.id === 'ApiKeys')!;
  const name = localTableEnv(prefix)[keys.envVar]!;
  const client = localClient(endpoint);
  try {
    // As an earlier version made it: the key alone, no index.
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: keys.partitionKey.name, AttributeType: keys.partitionKey.type }],
        KeySchema: [{ AttributeName: keys.partitionKey.name, KeyType: 'HASH' }],
      }),
    );
    await provisionLocalTables(endpoint, prefix);
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort()).toEqual(
      keys.indexes.map((i) => i.indexName).sort(),
    );
    // Idempotent: a second start finds nothing to add.
    await provisionLocalTables(endpoint, prefix);
  } finally {
    client.destroy();
  }
});
