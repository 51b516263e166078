/**
 * Preflight on a failed create: its finding names the one walk-back command (the very command `npm run walk-back`
 * names again after a failed step) and which of the stack's tables still have deletion protection on, read from real
 * DynamoDB Local tables through a stand-in for CloudFormation; and says so when it cannot read them.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { deployedStackCheck, type PreflightInput } from '../../lib/preflight/checks.ts';
import { readDeployedStack } from '../../lib/preflight/deployed.ts';
import type { DynamoDBSend } from '../../lib/preflight/stack-tables.ts';
import { walkBackTarget } from '../../lib/preflight/walk-back-cli.ts';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';
import { failedCreateResources, StackStandIn } from './cloudformation-stand-in.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';
import { createTable, tableName } from './walk-back-world.ts';

const STACK = 'AnimalStore-production';
let ddb: DynamoDBClient;
beforeAll(() => {
  ddb = new DynamoDBClient({
    endpoint: inject('dynamoEndpoint'),
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(() => ddb?.destroy());

/** The deployed-stack check's lines for production, the stack read through the stand-in and `tables`' client. */
function findings(stack: StackStandIn, tables: DynamoDBSend) {
  return deployedStackCheck.run({
    stage: 'production',
    stackName: STACK,
    name: 'production',
    template: { Resources: {} },
    terminationProtection: true,
    firstDeploy: false,
    firstDeployKey: firstDeployContextKey('production'),
    context: PRODUCTION_CONTEXT,
    deployed: () => readDeployedStack(stack, STACK, tables),
    note: () => {},
  } as unknown as PreflightInput);
}

const table = (protectedOn: boolean) => createTable(ddb, tableName('preflight'), protectedOn);

it('names the walk-back command and the tables still protected, on every page of the stack', async () => {
  const [a, b, c] = [await table(true), await table(false), await table(true)];
  const { command, deploy } = await walkBackTarget('production', PRODUCTION_CONTEXT);
  const stack = new StackStandIn(
    STACK,
    { status: 'ROLLBACK_FAILED', terminationProtection: true },
    failedCreateResources([a!, b!, c!]),
  );
  expect(await findings(stack, ddb)).toEqual([
    `deployed stack: ${STACK} is ROLLBACK_FAILED (termination protection on): a delete-stack now keeps the tables its create made (RetainExceptOnCreate): walk it back with ${command} (tables with deletion protection still on: ${a}, ${c}; it deletes the tables this create left, then the stack; docs/deployment.md, "A failed first deploy"), then ${deploy}`,
  ]);
});

it('says when no table is left protected, and when the tables cannot be read', async () => {
  const stack = new StackStandIn(
    STACK,
    { status: 'ROLLBACK_COMPLETE', terminationProtection: true },
    failedCreateResources(['animal-store-gone-with-the-rollback'], 260, 'DELETE_COMPLETE'),
  );
  expect(await findings(stack, ddb)).toEqual([
    expect.stringContaining(' (no table with deletion protection left; it deletes'),
  ]);
  const unprotected = await table(false);
  const failed = new StackStandIn(
    STACK,
    { status: 'DELETE_FAILED', terminationProtection: false },
    failedCreateResources([unprotected]),
  );
  const deniedReads: DynamoDBSend = {
    send: (async () => {
      throw Object.assign(new Error('not authorized to perform: dynamodb:DescribeTable'), {
        name: 'AccessDeniedException',
      });
    }) as DynamoDBSend['send'],
  };
  expect(await findings(failed, deniedReads)).toEqual([
    expect.stringContaining(
      `(the tables' deletion protection could not be read: AccessDeniedException: not authorized to perform: dynamodb:DescribeTable; it deletes`,
    ),
  ]);
});
