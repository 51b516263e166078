/**
 * `npm run walk-back`: a failed first deploy walked back to nothing, so the first deploy can run again. The tables are
 * real DynamoDB Local tables (it honours DeletionProtectionEnabled: DeleteTable on a protected table is refused), the
 * CloudFormation side a stand-in (no local engine exists). A fault at each step stops the run, which says where and
 * names the one command; that same command, run again, ends with the stack and every table gone.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { walkBackTarget } from '../../lib/preflight/walk-back-cli.ts';
import { walkBack, type WalkBackTarget } from '../../lib/preflight/walk-back.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';
import { failedCreateResources, StackStandIn } from './cloudformation-stand-in.ts';
import { noCredentials } from './preflight-cli.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';

const STACK = 'AnimalStore-production';
let proxy: FaultProxy;
let ddb: DynamoDBClient;
let target: WalkBackTarget;
const dir = mkdtempSync(join(tmpdir(), 'animal-store-walk-back-test-'));

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  ddb = new DynamoDBClient({
    endpoint: proxy.url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  target = await walkBackTarget('production', PRODUCTION_CONTEXT);
});
afterAll(async () => {
  ddb?.destroy();
  await proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

const COMMAND = `npm run walk-back -- --stage production -c animal-store:production:account=123456789012 -c animal-store:production:alarmEmails=ops@example.com`;
const DEPLOY = `npx cdk deploy ${STACK} -c animal-store:production:account=123456789012 -c animal-store:production:alarmEmails=ops@example.com -c animal-store:production:firstDeploy=true`;

/** Three tables as a failed create leaves them: two with deletion protection on, one without. */
async function tablesOfAFailedCreate(): Promise<string[]> {
  const prefix = `wb${randomBytes(4).toString('hex')}`;
  const names = [`${prefix}-pets`, `${prefix}-api-keys`, `${prefix}-state`];
  for (const [i, TableName] of names.entries())
    await ddb.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        DeletionProtectionEnabled: i < 2,
      }),
    );
  for (const TableName of names) await waitUntilTableExists({ client: ddb, maxWaitTime: 60 }, { TableName });
  return names;
}

/** Each table as DynamoDB Local describes it now: its deletion protection, or gone. */
const tablesNow = (names: string[]) =>
  Promise.all(
    names.map((TableName) =>
      ddb.send(new DescribeTableCommand({ TableName })).then(
        (d) => (d.Table?.DeletionProtectionEnabled ? 'protected' : 'unprotected'),
        (e: Error) => (e.name === 'ResourceNotFoundException' ? 'gone' : e.name),
      ),
    ),
  );

/** One run of the walk-back: its exit code and the lines it printed. */
async function run(stack: StackStandIn) {
  const lines: string[] = [];
  const code = await walkBack(target, { cfn: stack, ddb, out: (l) => lines.push(l), sleep: async () => {} });
  return { code, lines };
}

it('names itself and the deploy after it as preflight names them, with the deploy context', () => {
  expect(target).toMatchObject({ stackName: STACK, command: COMMAND, deploy: DEPLOY });
});

it('walks back a protected ROLLBACK_FAILED stack of 260 resources, each step said; a second run has nothing to do', async () => {
  const tables = await tablesOfAFailedCreate();
  const stack = new StackStandIn(
    STACK,
    { status: 'ROLLBACK_FAILED', terminationProtection: true },
    failedCreateResources(tables),
  );
  const first = await run(stack);
  expect(first.lines).toEqual([
    `${STACK}: ROLLBACK_FAILED, termination protection on`,
    `${STACK}: 3 table(s) left: ${tables.join(', ')}`,
    `${STACK}: table ${tables[0]}: deletion protection off`,
    `${STACK}: table ${tables[0]}: deleted`,
    `${STACK}: table ${tables[1]}: deletion protection off`,
    `${STACK}: table ${tables[1]}: deleted`,
    `${STACK}: table ${tables[2]}: deleted`,
    `${STACK}: termination protection off`,
    `${STACK}: delete-stack started`,
    `${STACK}: gone`,
    `walked back: deploy it anew with ${DEPLOY}, then once more without the switch`,
  ]);
  expect(first.code).toBe(0);
  expect(await tablesNow(tables)).toEqual(['gone', 'gone', 'gone']);
  expect(stack.status).toBeUndefined();

  const again = await run(stack);
  expect(again.lines).toEqual([
    `${STACK}: absent`,
    `${STACK}: already gone`,
    `walked back: deploy it anew with ${DEPLOY}, then once more without the switch`,
  ]);
  expect(again.code).toBe(0);
});

describe('refuses, changing nothing', () => {
  it.each([
    ['UPDATE_COMPLETE', true],
    ['CREATE_COMPLETE', false],
    ['UPDATE_ROLLBACK_FAILED', true],
    ['ROLLBACK_IN_PROGRESS', true],
    ['UPDATE_IN_PROGRESS', true],
  ])('a stack in %s (termination protection %s)', async (status, tp) => {
    const tables = await tablesOfAFailedCreate();
    const stack = new StackStandIn(STACK, { status, terminationProtection: tp }, failedCreateResources(tables));
    const { code, lines } = await run(stack);
    expect(lines).toEqual([
      expect.stringContaining(`${STACK}: ${status}`),
      expect.stringMatching(
        new RegExp(`^${STACK}: refused: the walk-back deletes only a stack whose create failed .*npm run preflight`),
      ),
    ]);
    expect(code).toBe(2);
    expect(stack.calls).toEqual(['DescribeStacks']);
    expect([stack.status, stack.terminationProtection]).toEqual([status, tp]);
    expect(await tablesNow(tables)).toEqual(['protected', 'protected', 'unprotected']);
  });

  it("a table holding items (someone's data, not a failed create's), before any table or the stack is touched", async () => {
    const tables = await tablesOfAFailedCreate();
    await ddb.send(new PutItemCommand({ TableName: tables[2], Item: { pk: { S: 'customer' } } }));
    const stack = new StackStandIn(
      STACK,
      { status: 'DELETE_FAILED', terminationProtection: true },
      failedCreateResources(tables),
    );
    const { code, lines } = await run(stack);
    expect(lines.at(-1)).toBe(
      `${STACK}: refused: table ${tables[2]} holds items, which a failed create's table never does: nothing was changed; back it up or delete it yourself, then run this again`,
    );
    expect(code).toBe(2);
    expect(await tablesNow(tables)).toEqual(['protected', 'protected', 'unprotected']);
    expect([stack.status, stack.terminationProtection]).toEqual(['DELETE_FAILED', true]);
  });
});

it('walks back a protected ROLLBACK_COMPLETE stack (its rollback deleted the tables): protection off, delete', async () => {
  const stack = new StackStandIn(
    STACK,
    { status: 'ROLLBACK_COMPLETE', terminationProtection: true },
    failedCreateResources(['animal-store-gone-with-the-rollback'], 260, 'DELETE_COMPLETE'),
  );
  const { code, lines } = await run(stack);
  expect(lines.slice(1, 3)).toEqual([`${STACK}: 0 table(s) left: none`, `${STACK}: termination protection off`]);
  expect(code).toBe(0);
  expect(stack.status).toBeUndefined();
});

/** Where a fault is armed, and the step the failed run names. */
const FAULTS: [string, (stack: StackStandIn, tables: string[]) => void, string][] = [
  [
    'the second page of resources',
    (s) => s.failNext('ListStackResources', 1),
    `list the stack's tables (ListStackResources)`,
  ],
  [
    "the first table's deletion protection",
    (_, t) => proxy.add({ target: 'UpdateTable', body: t[0], times: 1, fault: denial('UpdateTable') }),
    'turn deletion protection off on table T0 (UpdateTable)',
  ],
  [
    "the first table's delete, after its protection went off",
    (_, t) => proxy.add({ target: 'DeleteTable', body: t[0], times: 1, fault: denial('DeleteTable') }),
    'delete table T0 (DeleteTable)',
  ],
  [
    "the unprotected table's delete",
    (_, t) => proxy.add({ target: 'DeleteTable', body: t[2], times: 1, fault: denial('DeleteTable') }),
    'delete table T2 (DeleteTable)',
  ],
  [
    'a table read while waiting for it to go',
    (_, t) => proxy.add({ target: 'DescribeTable', body: t[1], skip: 2, times: 1, fault: denial('DescribeTable') }),
    'wait for table T1 to be gone',
  ],
  [
    'termination protection',
    (s) => s.failNext('UpdateTerminationProtection'),
    'turn termination protection off (UpdateTerminationProtection)',
  ],
  ['delete-stack', (s) => s.failNext('DeleteStack'), 'delete the stack (DeleteStack)'],
  ['the wait for the delete', (s) => s.failNext('DescribeStacks', 1), 'wait for the stack to be gone (DescribeStacks)'],
  [
    'a delete that ends DELETE_FAILED',
    (s) => (s.deleteFails = true),
    'wait for the stack to be gone (DescribeStacks)": Error: the delete ended DELETE_FAILED: read why (aws cloudformation describe-stack-events --stack-name AnimalStore-production), fix it',
  ],
];

function denial(action: string) {
  return {
    kind: 'error',
    status: 400,
    type: 'AccessDeniedException',
    message: `User: arn:aws:sts::123456789012:assumed-role/deployer is not authorized to perform: dynamodb:${action}`,
  } as const;
}

describe('a fault at each step: the run says where and names the command; the same command finishes', () => {
  it.each(FAULTS)('%s', async (_, arm, step) => {
    const tables = await tablesOfAFailedCreate();
    const stack = new StackStandIn(
      STACK,
      { status: 'ROLLBACK_FAILED', terminationProtection: true },
      failedCreateResources(tables),
    );
    arm(stack, tables);
    const failed = await run(stack);
    proxy.clear();
    const named = tables.reduce((s, t, i) => s.replaceAll(`T${i}`, t), step);
    expect(failed.lines.at(-2)).toContain(`${STACK}: failed at "${named}`);
    expect(failed.lines.at(-1)).toBe(`every step converges when run again: run the same command again: ${COMMAND}`);
    expect(failed.code).toBe(1);

    const again = await run(stack);
    expect(again.lines.at(-1)).toBe(`walked back: deploy it anew with ${DEPLOY}, then once more without the switch`);
    expect(again.code).toBe(0);
    expect(await tablesNow(tables)).toEqual(['gone', 'gone', 'gone']);
    expect(stack.status).toBeUndefined();
    // Protection already off is not turned off again.
    for (const t of tables)
      if (failed.lines.includes(`${STACK}: table ${t}: deletion protection off`))
        expect(again.lines).not.toContain(`${STACK}: table ${t}: deletion protection off`);
  });
});

it('without AWS credentials: says so, names the command, exits non-zero', async () => {
  const result = await promisify(execFile)(
    'npm',
    [
      'run',
      '-s',
      'walk-back',
      '--',
      '--stage',
      'production',
      ...Object.entries(PRODUCTION_CONTEXT).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ],
    { cwd: new URL('../../', import.meta.url).pathname, env: noCredentials(dir) },
  ).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );
  expect(result.stderr.trim()).toMatch(
    new RegExp(
      `^walk-back ${STACK}: no AWS credentials or region \\(.*\\): nothing done; with credentials for the stack's account, run: ${COMMAND.replaceAll('.', '\\.')}$`,
    ),
  );
  expect(result.code).toBe(1);
});
