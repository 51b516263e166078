/** One DynamoDB Local for the whole run; each test file creates its own tables under a unique prefix. */
import type { TestProject } from 'vitest/node';
import { startDynamoLocal, type DynamoLocal } from '../../lib/local/dynamodb.ts';

let dynamo: DynamoLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  dynamo = await startDynamoLocal();
  project.provide('dynamoEndpoint', dynamo.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamo?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
