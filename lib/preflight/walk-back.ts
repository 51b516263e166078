/**
 * The walk-back of a failed first deploy (`npm run walk-back -- --stage <stage>`): what docs/deployment.md, "A failed
 * first deploy", did by hand, as one command that converges when run again from any failed step. Each step reads
 * before it writes, so a step already done is skipped on the next run:
 * 1. the stack's status (DescribeStacks): only a failed create is walked back (stack-status.ts, walkBackPlan); a
 *    stack already gone is done, one whose delete runs is only waited for;
 * 2. its tables (ListStackResources, every page), each read first: one that holds an item stops the walk-back
 *    before anything changes (a failed create's tables are empty; a table with items is someone's data);
 * 3. each table, once ACTIVE: deletion protection off where on, wait ACTIVE, DeleteTable, wait gone (gone: done). The
 *    tables go first: they are RetainExceptOnCreate, so a delete-stack after a failed rollback would keep them;
 * 4. termination protection off where on, DeleteStack, wait until the stack is gone;
 * 5. the first deploy again, with the switch, printed.
 */
import type { CloudFormationSend } from './deployed.ts';
import { readStackState } from './deployed.ts';
import { walkBackPlan, type StackState } from './stack-status.ts';
import { holdsItems, listStackTables, readTable, type DynamoDBSend, type TableState } from './stack-tables.ts';

export interface WalkBackTarget {
  readonly stackName: string;
  /** The command that runs this walk-back: named again after a failed step, since every step converges. */
  readonly command: string;
  /** The deploy that follows: a first deploy, with the switch. */
  readonly deploy: string;
}

export interface WalkBackDeps {
  readonly cfn: CloudFormationSend;
  readonly ddb: DynamoDBSend;
  /** One line per step as it goes. */
  readonly out: (line: string) => void;
  /** Between two reads of a wait. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Exit codes: done (or already), a step failed (run the same command again), refused (nothing changed). */
export const WALKED_BACK = 0;
export const STEP_FAILED = 1;
export const REFUSED = 2;

// How often and how long each wait reads. A stack of ~260 resources takes minutes to delete; a table seconds. Our
// own loop, not the SDK's waiters: those retry any unexpected error (a denied read) silently until their time is
// up, where this stops at once and names the step and the command that finishes it.
const STACK_POLL = { everyMs: 10_000, reads: 360 };
const TABLE_POLL = { everyMs: 2_000, reads: 300 };

/** Why the walk-back stops without changing anything more (a refusal, not a failed step). */
class Refusal extends Error {}

const describe = (s: StackState) =>
  s.state === 'absent' ? 'absent' : `${s.status}, termination protection ${s.terminationProtection ? 'on' : 'off'}`;

/** Walks the stack back; returns the exit code. Each step's line starts with the stack's name. */
export async function walkBack(target: WalkBackTarget, deps: WalkBackDeps): Promise<number> {
  const { cfn, ddb } = deps;
  const { stackName } = target;
  const say = (line: string) => deps.out(`${stackName}: ${line}`);
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let step = 'read the stack (DescribeStacks)';

  /** Reads until `done` says so; a read that throws, or too many reads, fail the step. */
  async function until<T>(
    poll: { everyMs: number; reads: number },
    read: () => Promise<T>,
    done: (v: T) => boolean,
    shown: (v: T) => string,
  ): Promise<void> {
    let last: T | undefined;
    for (let i = 0; i < poll.reads; i++) {
      if (i) await sleep(poll.everyMs);
      last = await read();
      if (done(last)) return;
    }
    throw new Error(`still ${shown(last as T)} after ${(poll.everyMs * poll.reads) / 60_000} min`);
  }
  const tableShown = (t: TableState) => (t.gone ? 'gone' : t.status);

  /** The table once ACTIVE (UpdateTable and DeleteTable refuse a table that is changing), or gone. */
  async function settled(name: string): Promise<TableState> {
    step = `wait for table ${name} to be ACTIVE`;
    let now: TableState = { gone: true };
    await until(
      TABLE_POLL,
      async () => (now = await readTable(ddb, name)),
      (t) => t.gone || t.status === 'ACTIVE',
      tableShown,
    );
    return now;
  }

  async function deleteTable(name: string, table: TableState): Promise<void> {
    if (table.gone) return say(`table ${name}: already gone`);
    const { UpdateTableCommand, DeleteTableCommand } = await import('@aws-sdk/client-dynamodb');
    if (table.status !== 'DELETING') {
      let now = await settled(name);
      if (!now.gone && now.deletionProtection) {
        step = `turn deletion protection off on table ${name} (UpdateTable)`;
        await ddb.send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: false }));
        say(`table ${name}: deletion protection off`);
        now = await settled(name);
      }
      step = `delete table ${name} (DeleteTable)`;
      if (!now.gone)
        await ddb.send(new DeleteTableCommand({ TableName: name })).catch((e: Error) => {
          if (e.name !== 'ResourceNotFoundException') throw e;
        });
    }
    step = `wait for table ${name} to be gone`;
    await until(
      TABLE_POLL,
      () => readTable(ddb, name),
      (t) => t.gone,
      tableShown,
    );
    say(`table ${name}: deleted`);
  }

  try {
    const found = await readStackState(cfn, stackName);
    say(describe(found));
    const plan = walkBackPlan(found);
    if (plan === 'refuse')
      throw new Refusal(
        `the walk-back deletes only a stack whose create failed (ROLLBACK_COMPLETE, ROLLBACK_FAILED, CREATE_FAILED, DELETE_FAILED), never one in ${describe(found)}: npm run preflight names its next step`,
      );
    if (plan === 'walk' && found.state === 'present') {
      step = "list the stack's tables (ListStackResources)";
      const names = await listStackTables(cfn, stackName);
      say(`${names.length} table(s) left: ${names.join(', ') || 'none'}`);
      const tables: TableState[] = [];
      for (const name of names) {
        step = `read table ${name} (DescribeTable, Scan)`;
        const table = await readTable(ddb, name);
        if (!table.gone && (await holdsItems(ddb, name)))
          throw new Refusal(
            `table ${name} holds items, which a failed create's table never does: nothing was changed; back it up or delete it yourself, then run this again`,
          );
        tables.push(table);
      }
      for (const [i, name] of names.entries()) await deleteTable(name, tables[i]!);
      if (found.terminationProtection) {
        step = 'turn termination protection off (UpdateTerminationProtection)';
        const { UpdateTerminationProtectionCommand } = await import('@aws-sdk/client-cloudformation');
        await cfn.send(
          new UpdateTerminationProtectionCommand({ StackName: stackName, EnableTerminationProtection: false }),
        );
        say('termination protection off');
      }
      step = 'delete the stack (DeleteStack)';
      const { DeleteStackCommand } = await import('@aws-sdk/client-cloudformation');
      await cfn.send(new DeleteStackCommand({ StackName: stackName }));
      say('delete-stack started');
    }
    if (plan !== 'gone') {
      step = 'wait for the stack to be gone (DescribeStacks)';
      await until(
        STACK_POLL,
        async () => {
          const s = await readStackState(cfn, stackName);
          if (s.state === 'present' && s.status === 'DELETE_FAILED')
            throw new Error(
              `the delete ended DELETE_FAILED: read why (aws cloudformation describe-stack-events --stack-name ${stackName}), fix it`,
            );
          return s;
        },
        (s) => walkBackPlan(s) === 'gone',
        describe,
      );
    }
    say(plan === 'gone' ? 'already gone' : 'gone');
    deps.out(`walked back: deploy it anew with ${target.deploy}, then once more without the switch`);
    return WALKED_BACK;
  } catch (e) {
    if (e instanceof Refusal) return (say(`refused: ${e.message}`), REFUSED);
    const err = e as Error;
    say(`failed at "${step}": ${err.name}: ${err.message.split('\n')[0]}`);
    deps.out(`every step converges when run again: run the same command again: ${target.command}`);
    return STEP_FAILED;
  }
}
