/**
 * The floor Lambda: only the DynamoDB DocumentClient at module scope and one GetItem per invocation. Bundled with
 * the same settings as the real handlers, it is what a handler cannot beat.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const endpoint = process.env.DYNAMODB_ENDPOINT;
const doc = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: process.env.AWS_REGION ?? 'us-east-1',
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  }),
);
const table = process.env.PETS_TABLE_NAME;

export const handler = async (event: { pathParameters?: { petId?: string } | null }) => {
  const out = await doc.send(
    new GetCommand({ TableName: table, Key: { id: Number(event.pathParameters?.petId ?? 1) } }),
  );
  return { statusCode: out.Item ? 200 : 404, body: JSON.stringify(out.Item ?? null) };
};
