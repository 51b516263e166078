/** Reads the pets table directly, to check what a request really wrote (not what the API says it wrote). */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** Every stored pet with this name, read straight from the table (all scan pages). */
export async function storedPetsNamed(
  client: DynamoDBClient,
  tableName: string,
  name: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, never> | undefined;
  do {
    const out = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#n = :n',
        ExpressionAttributeNames: { '#n': 'name' },
        ExpressionAttributeValues: { ':n': { S: name } },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []).map((i) => unmarshall(i)));
    start = out.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start);
  return items;
}
