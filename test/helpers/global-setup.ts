/**
 * One DynamoDB Local for the whole run (each test file creates its own tables under a unique prefix), and one synth
 * of the stack the local gateway runs, bundles included: every worker's startTestApi and the bundle test then read
 * the cached assembly (lib/local/synth.ts) instead of synthesizing again.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoLocal, type DynamoLocal } from '../../lib/local/dynamodb.ts';
import { localAssembly } from '../../lib/local/synth.ts';

let dynamo: DynamoLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  dynamo = await startDynamoLocal();
  // After DynamoDB Local is up: both at once can starve its start-up on a busy machine.
  await localAssembly({ bundle: true });
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
