/**
 * A stand-in for CloudFormation's control plane (no local engine exists) holding one stack as the walk-back meets
 * it: status, termination protection and its resources, listed 100 to a page as ListStackResources does. It answers
 * as AWS does where the walk-back depends on it: "does not exist" once the stack is gone, DeleteStack refused while
 * termination protection is on, a delete that runs through DELETE_IN_PROGRESS. A fault can be armed at any call.
 */
import type { CloudFormationSend } from '../../lib/preflight/deployed.ts';

export interface StackResource {
  readonly LogicalResourceId: string;
  readonly ResourceType: string;
  readonly PhysicalResourceId: string;
  ResourceStatus: string;
}

/** What AWS answers a caller whose role lacks the action: not retried by the SDK. */
export const denied = (action: string) =>
  Object.assign(
    new Error(`User: arn:aws:sts::123456789012:assumed-role/deployer is not authorized to perform: ${action}`),
    {
      name: 'AccessDenied',
    },
  );

export class StackStandIn implements CloudFormationSend {
  /** undefined: gone. */
  status: string | undefined;
  terminationProtection: boolean;
  /** Every call, by command name. */
  readonly calls: string[] = [];
  private armed?: { command: string; skip: number };
  /** The next delete ends DELETE_FAILED (a resource CloudFormation could not delete). */
  deleteFails = false;

  readonly stackName: string;
  readonly resources: StackResource[];

  constructor(stackName: string, init: { status: string; terminationProtection: boolean }, resources: StackResource[]) {
    this.stackName = stackName;
    this.resources = resources;
    this.status = init.status;
    this.terminationProtection = init.terminationProtection;
  }

  /** The `skip + 1`th call of `command` from now fails as a denied action (nothing applied). */
  failNext(command: string, skip = 0) {
    this.armed = { command, skip };
  }

  send = (async (command: { constructor: { name: string }; input: Record<string, any> }) => {
    const name = command.constructor.name.replace(/Command$/, '');
    this.calls.push(name);
    if (this.armed?.command === name && this.armed.skip-- === 0) {
      this.armed = undefined;
      throw denied(`cloudformation:${name}`);
    }
    if (this.status === undefined || command.input.StackName !== this.stackName)
      throw Object.assign(new Error(`Stack with id ${command.input.StackName} does not exist`), {
        name: 'ValidationError',
      });
    switch (name) {
      case 'DescribeStacks': {
        const described = { StackName: this.stackName, StackStatus: this.status };
        // A delete in progress is seen once, then it has finished.
        if (this.status === 'DELETE_IN_PROGRESS') {
          this.status = this.deleteFails ? 'DELETE_FAILED' : undefined;
          this.deleteFails = false;
        }
        return { Stacks: [{ ...described, EnableTerminationProtection: this.terminationProtection }] };
      }
      case 'ListStackResources': {
        const from = Number(command.input.NextToken ?? 0);
        const next = from + 100 < this.resources.length ? String(from + 100) : undefined;
        return { StackResourceSummaries: this.resources.slice(from, from + 100), NextToken: next };
      }
      case 'UpdateTerminationProtection':
        this.terminationProtection = command.input.EnableTerminationProtection;
        return { StackId: this.stackName };
      case 'DeleteStack':
        if (this.terminationProtection)
          throw Object.assign(
            new Error(`Stack [${this.stackName}] cannot be deleted while TerminationProtection is enabled`),
            { name: 'ValidationError' },
          );
        this.status = 'DELETE_IN_PROGRESS';
        return {};
      default:
        throw new Error(`the stand-in does not answer ${name}`);
    }
  }) as CloudFormationSend['send'];
}

/**
 * A stack of `count` resources as a failed create leaves it, the given tables spread over its pages (the first in
 * the first 100, the last past 250), each in `tableStatus`.
 */
export function failedCreateResources(tables: readonly string[], count = 260, tableStatus = 'DELETE_FAILED') {
  const resources: StackResource[] = Array.from({ length: count }, (_, i) => ({
    LogicalResourceId: `Resource${i}`,
    ResourceType: i % 2 ? 'AWS::Lambda::Function' : 'AWS::IAM::Role',
    PhysicalResourceId: `resource-${i}`,
    ResourceStatus: 'DELETE_COMPLETE',
  }));
  tables.forEach((t, i) => {
    resources[i === tables.length - 1 ? count - 1 : 10 + 100 * i] = {
      LogicalResourceId: `Table${i}`,
      ResourceType: 'AWS::DynamoDB::GlobalTable',
      PhysicalResourceId: t,
      ResourceStatus: tableStatus,
    };
  });
  return resources;
}
