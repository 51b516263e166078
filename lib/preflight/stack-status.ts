/**
 * The one right next step for a stack, from its CloudFormation status, termination protection, the first-deploy
 * switch and whether the template would strand a failed create. It follows what the CDK CLI (2.1148) does:
 * - REVIEW_IN_PROGRESS counts as absent: the CLI creates a CREATE change set and sets termination protection first.
 * - ROLLBACK_COMPLETE, ROLLBACK_FAILED: the CLI deletes the stack before creating it again, which termination
 *   protection refuses. A `RetainExceptOnCreate` table whose create rolled back survives delete-stack, so
 *   ROLLBACK_FAILED (and a create failed without rollback) needs its tables deleted by hand first.
 * - UPDATE_ROLLBACK_FAILED needs `continue-update-rollback` (AWS documents it for that status alone);
 *   IMPORT_ROLLBACK_FAILED gets its events read.
 * - DELETE_FAILED is a walk-back stopped partway, or a stack with data someone deleted. Other *_IN_PROGRESS: wait.
 * `npm run walk-back` (lib/preflight/walk-back.ts) reads the status through the same rules.
 */

/** What CloudFormation says of the stack (DescribeStacks). */
export type StackState = { readonly state: 'absent' } | PresentStack;

/** A stack CloudFormation has. */
export interface PresentStack {
  readonly state: 'present';
  readonly status: string;
  readonly terminationProtection: boolean;
  /**
   * Only where the walk-back is the step and the tables could be looked at (a DynamoDB client was given): what it
   * still has to turn off.
   */
  readonly tables?: StackTables;
}

/** The tables a walk-back deletes, as preflight read them: those with deletion protection still on, or why not read. */
export type StackTables = { readonly protectedOn: readonly string[] } | { readonly unreadable: string };

export type StepKind =
  | 'deploy' // nothing in the way: `cdk deploy` (an update, or a create the switch or no protection keeps retryable)
  | 'add-switch' // absent (or as good as): a protected template must go out with the first-deploy switch
  | 'drop-switch' // the stack exists: the switch would turn its protections off
  | 'walk-back' // a failed create the CLI's retry cannot clear: `npm run walk-back`
  | 'continue-update-rollback'
  | 'roll-back' // an update that failed without rolling back (--no-rollback)
  | 'wait' // an operation is running
  | 'read-events'; // a status this table does not know

export interface NextStep {
  readonly kind: StepKind;
  /** The finding, when the step is not a plain deploy. */
  readonly finding?: string;
}

export interface StackFacts {
  readonly stackName: string;
  /** `-c animal-store:<name>:firstDeploy` */
  readonly firstDeployKey: string;
  readonly firstDeploy: boolean;
  /** Whether the template about to be deployed turns on termination protection or a table's deletion protection. */
  readonly protectedTemplate: boolean;
  /** Extra context the deploy command needs (production's account and alarm subscriber), as `-c` words. */
  readonly deployArgs?: string;
  /** The name `npm run walk-back -- --stage <name>` takes: the stage, or `account`. */
  readonly name: string;
}

/**
 * The statuses `npm run walk-back` takes a stack from (lib/preflight/walk-back.ts): a failed create, and what a
 * walk-back stopped partway leaves (a ROLLBACK_COMPLETE with termination protection already off, a DELETE_FAILED).
 */
const WALK_BACK_STATUSES: ReadonlySet<string> = new Set([
  'ROLLBACK_COMPLETE',
  'ROLLBACK_FAILED',
  'CREATE_FAILED',
  'DELETE_FAILED',
]);

/** Whether the walk-back would delete a stack in this status (its tables are worth reading for the finding). */
export const isWalkBackStatus = (status: string): boolean => WALK_BACK_STATUSES.has(status);

/**
 * What the walk-back does with the stack as it finds it: done already (gone), only wait (its own delete running),
 * walk it back, or refuse (a healthy, updating or unknown stack is never deleted by it).
 */
export function walkBackPlan(s: StackState): 'gone' | 'wait' | 'walk' | 'refuse' {
  if (s.state === 'absent' || s.status === 'DELETE_COMPLETE') return 'gone';
  if (s.status === 'DELETE_IN_PROGRESS') return 'wait';
  return isWalkBackStatus(s.status) ? 'walk' : 'refuse';
}

/** The one command that walks a failed create back; the same command finishes it after any failed step. */
export const walkBackCommand = (name: string, args: string): string =>
  `npm run walk-back -- --stage ${name}${args ? ` ${args}` : ''}`;

/** The deploy that follows a walk-back: a first deploy again, with the switch. */
export const firstDeployCommand = (stackName: string, args: string, switchKey: string): string =>
  `npx cdk deploy ${stackName}${args ? ` ${args}` : ''} -c ${switchKey}=true`;

/** What the finding says of the tables the walk-back will turn deletion protection off on (nothing: not read). */
function tablesNote(tables: StackTables | undefined): string {
  if (!tables) return '';
  if ('unreadable' in tables) return `the tables' deletion protection could not be read: ${tables.unreadable}; `;
  return tables.protectedOn.length
    ? `tables with deletion protection still on: ${tables.protectedOn.join(', ')}; `
    : 'no table with deletion protection left; ';
}

const SETTLED_DEPLOYED = new Set([
  'CREATE_COMPLETE',
  'UPDATE_COMPLETE',
  'UPDATE_ROLLBACK_COMPLETE',
  'IMPORT_COMPLETE',
  'IMPORT_ROLLBACK_COMPLETE',
]);

/** The CLI's waiter for each running operation (a status without one: poll describe-stacks). */
const WAITERS: Readonly<Record<string, string>> = {
  CREATE_IN_PROGRESS: 'stack-create-complete',
  UPDATE_IN_PROGRESS: 'stack-update-complete',
  UPDATE_COMPLETE_CLEANUP_IN_PROGRESS: 'stack-update-complete',
  UPDATE_ROLLBACK_IN_PROGRESS: 'stack-rollback-complete',
  UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS: 'stack-rollback-complete',
  DELETE_IN_PROGRESS: 'stack-delete-complete',
  IMPORT_IN_PROGRESS: 'stack-import-complete',
};

/** Whether a deployed stack is the ones whose template the update rules compare against. */
export const isDeployed = (s: StackState): boolean => s.state === 'present' && SETTLED_DEPLOYED.has(s.status);

/** The single next step for the stack, with the finding that names it (none for a plain deploy). */
export function nextStep(facts: StackFacts, deployed: StackState): NextStep {
  const { stackName: stack, firstDeployKey: key } = facts;
  const deploy = `npx cdk deploy ${stack}${facts.deployArgs ? ` ${facts.deployArgs}` : ''}`;
  const at = (s: string) => `deployed stack: ${stack} is ${s}`;
  const walkBack = (why: string): NextStep => ({
    kind: 'walk-back',
    finding: `${at(why)}: walk it back with ${walkBackCommand(facts.name, facts.deployArgs ?? '')} (${deployed.state === 'present' ? tablesNote(deployed.tables) : ''}it deletes the tables this create left, then the stack; docs/deployment.md, "A failed first deploy"), then ${firstDeployCommand(stack, facts.deployArgs ?? '', key)}`,
  });
  const firstDeployRules = (why: string): NextStep =>
    facts.firstDeploy || !facts.protectedTemplate
      ? { kind: 'deploy' }
      : {
          kind: 'add-switch',
          finding: `${at(why)}: deploy it with ${deploy} -c ${key}=true, so a failed create can be retried (docs/deployment.md, "A failed first deploy")`,
        };

  if (deployed.state === 'absent' || deployed.status === 'DELETE_COMPLETE') return firstDeployRules('absent');
  const { status, terminationProtection: tp } = deployed;
  const protection = tp ? 'termination protection on' : 'no termination protection';
  if (status === 'REVIEW_IN_PROGRESS') return firstDeployRules(`${status} (never created)`);
  if (status === 'ROLLBACK_COMPLETE')
    return tp
      ? walkBack(`${status} with ${protection}, which refuses the delete the CLI retries with`)
      : firstDeployRules(`${status} (the CLI deletes it and creates it anew)`);
  if (status === 'ROLLBACK_FAILED' || status === 'CREATE_FAILED')
    return walkBack(
      `${status} (${protection}): a delete-stack now keeps the tables its create made (RetainExceptOnCreate)`,
    );
  // A delete that failed: a walk-back stopped partway (a failed create's stack, empty tables) is finished by the
  // walk-back; a stack someone deleted that holds data is not its business (it refuses a table with items), and AWS's
  // way for it is delete-stack again once the cause in its events is fixed, or with --retain-resources to keep them.
  if (status === 'DELETE_FAILED') {
    const step = walkBack(
      `${status} (${protection}): if it is a failed create's walk-back stopped partway, a delete-stack keeps the tables its create made (RetainExceptOnCreate)`,
    );
    return {
      ...step,
      finding: `${step.finding}. If it is a stack that holds data (a delete someone started), the walk-back refuses it: read why (aws cloudformation describe-stack-events --stack-name ${stack}), fix it, and aws cloudformation delete-stack --stack-name ${stack} again, or --retain-resources <the logical ids that failed> to keep them`,
    };
  }
  // AWS documents continue-update-rollback for UPDATE_ROLLBACK_FAILED only: a failed import's rollback is read first.
  if (status === 'IMPORT_ROLLBACK_FAILED')
    return {
      kind: 'read-events',
      finding: `${at(status)}: an import whose rollback failed takes no update; continue-update-rollback is documented for UPDATE_ROLLBACK_FAILED only: read why (aws cloudformation describe-stack-events --stack-name ${stack}), fix the resource it names by hand so the stack's template matches it, and ask AWS Support if the stack stays in ${status}; run preflight again after`,
    };
  if (status === 'UPDATE_ROLLBACK_FAILED')
    return {
      kind: 'continue-update-rollback',
      finding: `${at(status)}: it takes no update until its rollback finishes: aws cloudformation continue-update-rollback --stack-name ${stack} (add --resources-to-skip for a resource that cannot roll back, after reading its event), wait for UPDATE_ROLLBACK_COMPLETE, then run preflight again`,
    };
  if (status === 'UPDATE_FAILED')
    return {
      kind: 'roll-back',
      finding: `${at(status)} (deployed with --no-rollback): aws cloudformation rollback-stack --stack-name ${stack}, or fix and ${deploy} --no-rollback`,
    };
  if (status.endsWith('_IN_PROGRESS')) {
    const waiter = WAITERS[status];
    return {
      kind: 'wait',
      finding: `${at(status)}: wait for it to finish (${waiter ? `aws cloudformation wait ${waiter} --stack-name ${stack}` : `aws cloudformation describe-stacks --stack-name ${stack} --query 'Stacks[0].StackStatus' until it no longer ends in _IN_PROGRESS`}), then run preflight again`,
    };
  }
  if (SETTLED_DEPLOYED.has(status))
    return facts.firstDeploy
      ? {
          kind: 'drop-switch',
          finding: `${at(status)}: it exists, so drop -c ${key}=true, which would turn its termination protection and the tables' deletion protection off: ${deploy}`,
        }
      : { kind: 'deploy' };
  return {
    kind: 'read-events',
    finding: `${at(status)}, a status preflight does not know: read its events (aws cloudformation describe-stack-events --stack-name ${stack}) before any deploy`,
  };
}
