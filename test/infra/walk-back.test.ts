/**
 * `npm run walk-back`: a failed first deploy walked back to nothing, so the first deploy can run again. The tables are
 * real DynamoDB Local tables (it honours DeletionProtectionEnabled: DeleteTable on a protected table is refused), the
 * CloudFormation side a stand-in (no local engine exists): each step said, a second run with nothing to do, and the
 * stacks and tables it refuses to touch. A fault at each step: walk-back-faults.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { failedCreateResources, StackStandIn } from './cloudformation-stand-in.ts';
import { walkBackTarget } from '../../lib/preflight/walk-back-cli.ts';
import { noCredentials } from './preflight-cli.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';
import { COMMAND, DEPLOY, STACK, WALKED_BACK_LINE, walkBackWorld } from './walk-back-world.ts';

const { world, tablesOfAFailedCreate, tablesNow, run } = walkBackWorld();
const dir = mkdtempSync(join(tmpdir(), 'animal-store-walk-back-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('names itself and the deploy after it as preflight names them, with the deploy context', async () => {
  expect(world.target).toMatchObject({ stackName: STACK, command: COMMAND, deploy: DEPLOY });
  // The account stack, and a value the shell would split, pasted as one word.
  expect(await walkBackTarget('account', { 'animal-store:account:note': "a b's" })).toMatchObject({
    stackName: 'AnimalStore-account',
    command: `npm run walk-back -- --stage account -c animal-store:account:note='a b'\\''s'`,
    deploy: `npx cdk deploy AnimalStore-account -c animal-store:account:note='a b'\\''s' -c animal-store:account:firstDeploy=true`,
  });
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
    WALKED_BACK_LINE,
  ]);
  expect(first.code).toBe(0);
  expect(await tablesNow(tables)).toEqual(['gone', 'gone', 'gone']);
  expect(stack.status).toBeUndefined();

  const again = await run(stack);
  expect(again.lines).toEqual([`${STACK}: absent`, `${STACK}: already gone`, WALKED_BACK_LINE]);
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
    await world.ddb.send(new PutItemCommand({ TableName: tables[2], Item: { pk: { S: 'customer' } } }));
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
