/**
 * What the walk-back tests share: DynamoDB Local behind a fault proxy (real tables, real deletion protection), the
 * walk-back's own command and deploy for production, tables as a failed create leaves them, and one run's output.
 */
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, inject } from 'vitest';
import { walkBackTarget } from '../../lib/preflight/walk-back-cli.ts';
import { walkBack, type WalkBackTarget } from '../../lib/preflight/walk-back.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';
import type { StackStandIn } from './cloudformation-stand-in.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';

export const STACK = 'AnimalStore-production';
const CONTEXT_ARGS =
  '-c animal-store:production:account=123456789012 -c animal-store:production:alarmEmails=ops@example.com';
/** What preflight names and a failed step names again. */
export const COMMAND = `npm run walk-back -- --stage production ${CONTEXT_ARGS}`;
export const DEPLOY = `npx cdk deploy ${STACK} ${CONTEXT_ARGS} -c animal-store:production:firstDeploy=true`;
export const WALKED_BACK_LINE = `walked back: deploy it anew with ${DEPLOY}, then once more without the switch`;

/** A table on DynamoDB Local, ACTIVE, with or without deletion protection. */
export async function createTable(ddb: DynamoDBClient, TableName: string, protectedOn: boolean): Promise<string> {
  await ddb.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      DeletionProtectionEnabled: protectedOn,
    }),
  );
  await waitUntilTableExists({ client: ddb, maxWaitTime: 60 }, { TableName });
  return TableName;
}

export const tableName = (what: string) => `wb${randomBytes(4).toString('hex')}-${what}`;

/** Registers the world's set-up and tear-down in the calling test file. */
export function walkBackWorld() {
  const world = {} as { proxy: FaultProxy; ddb: DynamoDBClient; target: WalkBackTarget };
  /** A client of DynamoDB Local through the fault proxy (with a per-attempt timeout, for lost answers). */
  const localClient = (attemptMs?: number) =>
    new DynamoDBClient({
      endpoint: world.proxy.url,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      ...(attemptMs ? { requestHandler: { requestTimeout: attemptMs } } : {}),
    });
  beforeAll(async () => {
    world.proxy = await startFaultProxy(inject('dynamoEndpoint'));
    world.ddb = localClient();
    world.target = await walkBackTarget('production', PRODUCTION_CONTEXT);
  });
  afterAll(async () => {
    world.ddb?.destroy();
    await world.proxy?.close();
  });

  return {
    world,
    localClient,
    /** Three tables as a failed create leaves them: two with deletion protection on, one without. */
    tablesOfAFailedCreate: async (): Promise<string[]> => {
      const prefix = tableName('');
      const names = [0, 1, 2].map((i) => `${prefix}table${i}`);
      for (const [i, name] of names.entries()) await createTable(world.ddb, name, i < 2);
      return names;
    },
    /** Each table as DynamoDB Local describes it now: its deletion protection, or gone. */
    tablesNow: (names: string[]) =>
      Promise.all(
        names.map((TableName) =>
          world.ddb.send(new DescribeTableCommand({ TableName })).then(
            (d) => (d.Table?.DeletionProtectionEnabled ? 'protected' : 'unprotected'),
            (e: Error) => (e.name === 'ResourceNotFoundException' ? 'gone' : e.name),
          ),
        ),
      ),
    /** One run of the walk-back: its exit code and the lines it printed. */
    run: async (stack: StackStandIn, ddb = world.ddb) => {
      const lines: string[] = [];
      const out = (l: string) => lines.push(l);
      const code = await walkBack(world.target, { cfn: stack, ddb, out, sleep: async () => {} });
      return { code, lines };
    },
  };
}
