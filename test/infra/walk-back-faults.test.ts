/**
 * `npm run walk-back` with a fault at each step: DynamoDB's through a fault proxy in front of DynamoDB Local (a denied
 * call; an answer lost, which the SDK resends), CloudFormation's in its stand-in. The failed run says which step and
 * names the one command; that command, run again, ends with the stack and every table gone.
 */
import { describe, expect, it } from 'vitest';
import { failedCreateResources, StackStandIn } from './cloudformation-stand-in.ts';
import { COMMAND, STACK, WALKED_BACK_LINE, walkBackWorld } from './walk-back-world.ts';

const { world, localClient, tablesOfAFailedCreate, tablesNow, run } = walkBackWorld();

/** Where a fault is armed, and the step the failed run names. */
const FAULTS: [string, (stack: StackStandIn, tables: string[]) => void, string][] = [
  [
    'the second page of resources',
    (s) => s.failNext('ListStackResources', 1),
    `list the stack's tables (ListStackResources)`,
  ],
  [
    "the first table's deletion protection",
    (_, t) => world.proxy.add({ target: 'UpdateTable', body: t[0], times: 1, fault: denial('UpdateTable') }),
    'turn deletion protection off on table T0 (UpdateTable)',
  ],
  [
    "the first table's delete, after its protection went off",
    (_, t) => world.proxy.add({ target: 'DeleteTable', body: t[0], times: 1, fault: denial('DeleteTable') }),
    'delete table T0 (DeleteTable)',
  ],
  [
    "the unprotected table's delete",
    (_, t) => world.proxy.add({ target: 'DeleteTable', body: t[2], times: 1, fault: denial('DeleteTable') }),
    'delete table T2 (DeleteTable)',
  ],
  [
    'a table read while waiting for it to be ACTIVE',
    (_, t) =>
      world.proxy.add({ target: 'DescribeTable', body: t[0], skip: 1, times: 1, fault: denial('DescribeTable') }),
    'wait for table T0 to be ACTIVE',
  ],
  [
    'a table read while waiting for it to go',
    (_, t) =>
      world.proxy.add({ target: 'DescribeTable', body: t[1], skip: 3, times: 1, fault: denial('DescribeTable') }),
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
    world.proxy.clear();
    const named = tables.reduce((s, t, i) => s.replaceAll(`T${i}`, t), step);
    expect(failed.lines.at(-2)).toContain(`${STACK}: failed at "${named}`);
    expect(failed.lines.at(-1)).toBe(`every step converges when run again: run the same command again: ${COMMAND}`);
    expect(failed.code).toBe(1);

    const again = await run(stack);
    expect(again.lines.at(-1)).toBe(WALKED_BACK_LINE);
    expect(again.code).toBe(0);
    expect(await tablesNow(tables)).toEqual(['gone', 'gone', 'gone']);
    expect(stack.status).toBeUndefined();
    // Protection already off is not turned off again.
    for (const t of tables)
      if (failed.lines.includes(`${STACK}: table ${t}: deletion protection off`))
        expect(again.lines).not.toContain(`${STACK}: table ${t}: deletion protection off`);
  });
});

it('goes on when a DeleteTable answer is lost and the SDK resends it to a table already deleting or gone', async () => {
  const tables = await tablesOfAFailedCreate();
  // A short attempt timeout, so the SDK gives up on the held answer and resends.
  const impatient = localClient(500);
  const stack = new StackStandIn(
    STACK,
    { status: 'ROLLBACK_FAILED', terminationProtection: true },
    failedCreateResources(tables),
  );
  const lost = world.proxy.add({
    target: 'DeleteTable',
    body: tables[1],
    times: 1,
    fault: { kind: 'lose-answer', holdMs: 900 },
  });
  const { code, lines } = await run(stack, impatient);
  lost();
  impatient.destroy();
  expect(world.proxy.log.filter((r) => r.target === 'DeleteTable' && r.body.includes(tables[1]!))).toHaveLength(2);
  expect(lines.at(-1)).toBe(WALKED_BACK_LINE);
  expect(code).toBe(0);
  expect(await tablesNow(tables)).toEqual(['gone', 'gone', 'gone']);
});
