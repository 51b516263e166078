/** The floors' listPets read (bench/floor-server.ts, bench/floor-warm-handler.ts): a Scan, or the status index's Query. */
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';

export const listPetsCommand = (TableName: string, Limit: number, status: string | null | undefined) =>
  status
    ? new QueryCommand({
        TableName,
        IndexName: 'byStatus',
        KeyConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': status },
        Limit,
      })
    : new ScanCommand({ TableName, Limit });
