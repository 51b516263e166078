import { Annotations, type App, type Stack } from 'aws-cdk-lib';

/**
 * A stack's first deploy, said on the command line: `-c animal-store:<stage>:firstDeploy=true` (`account` for
 * AnimalStore-account). A failed first deploy must leave a stack the same command can deploy again, and two
 * protections prevent that when they are on from the start:
 * - the CDK CLI turns termination protection on before it executes a new stack's change set, and on the retry
 *   deletes the stack left in ROLLBACK_COMPLETE first, which termination protection refuses;
 * - a table with deletion protection and `RetainExceptOnCreate` must be deleted when the create rolls back, which
 *   DynamoDB refuses: the rollback ends in ROLLBACK_FAILED with the table stranded in it.
 * So the first deploy goes out with both off; the next deploy (without the flag) turns them on, as updates that
 * replace nothing. Passing the flag to a stack that exists would turn them off: synth warns, and
 * `npm run preflight` refuses it where it can see the deployed stack.
 */
export const firstDeployContextKey = (name: string): string => `animal-store:${name}:firstDeploy`;

/** Whether this synth is the first deploy of `name` (context `animal-store:<name>:firstDeploy=true`). */
export const isFirstDeploy = (app: App, name: string): boolean =>
  [true, 'true'].includes(app.node.tryGetContext(firstDeployContextKey(name)));

/** The warning every first-deploy synth carries, on the stack it concerns. */
export function warnFirstDeploy(stack: Stack, name: string): void {
  Annotations.of(stack).addWarningV2(
    'animal-store:firstDeploy',
    `${stack.stackName}: first deploy (${firstDeployContextKey(name)}=true): termination protection and the tables' deletion protection stay off so a failed create can be retried. Deploy again WITHOUT it as soon as this one succeeds; never pass it to a stack that exists.`,
  );
}
