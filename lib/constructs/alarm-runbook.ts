/**
 * Every alarm of a stack says what it means and links its section of docs/runbook.md (what on-call checks and does),
 * set in one place from one table keyed by the alarm's id (its construct path in the stack, e.g. `Alarms/Api5xxRate`,
 * `Deploy/ListPetsErrors`), by an aspect over the whole stack: alarms of every construct get their link, whoever
 * builds them. An alarm no entry matches gets a warning at synth, and test/infra/runbook.test.ts fails on it (both
 * stages): a new alarm needs its runbook section.
 */
import { Annotations, AspectPriority, Aspects, Stack, Token, type IAspect } from 'aws-cdk-lib';
import { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';

/** Where the runbook is, relative to the repository root (alarm descriptions are plain text: no base URL is known). */
export const RUNBOOK_PATH = 'docs/runbook.md';

export interface RunbookEntry {
  /** The alarm ids (construct paths in the stack, without `/Resource`) this entry covers. */
  readonly id: RegExp;
  /** The section's heading in the runbook (its anchor is GitHub's slug of it). */
  readonly section: string;
  /** What it means when the alarm fires, in one sentence for the notification. */
  readonly means: string;
}

/** First match wins: table alarms (`…SystemErrors`) come before function alarms (`…Errors`). */
export const ALARM_RUNBOOK: readonly RunbookEntry[] = [
  {
    id: /^Alarms\/Api5xxRate$/,
    section: 'API 5xx rate',
    means: 'Clients are getting server errors from us (a function failing, timing out, or storage unavailable).',
  },
  {
    id: /^Alarms\/ApiP99Latency$/,
    section: 'API p99 latency',
    means: 'The slowest 1 % of requests are slower than the threshold: clients may be timing out.',
  },
  {
    id: /^Alarms\/\w+SystemErrors$/,
    section: 'DynamoDB system errors',
    means: 'DynamoDB answered this table with 500s: requests on it got 503s or retried.',
  },
  {
    id: /^Alarms\/\w+Throttled$/,
    section: 'DynamoDB throttled requests',
    means: 'DynamoDB throttled requests on this table (a hot partition or an account quota).',
  },
  {
    id: /^Alarms\/\w+Errors$/,
    section: 'Lambda errors',
    means: 'An operation function threw or timed out: its requests got 5xx.',
  },
  {
    id: /^Alarms\/\w+(Throttles|ThrottleRate)$/,
    section: 'Lambda throttles',
    means: 'Lambda refused invocations (concurrency exhausted): those requests got 5xx or 429 from the gateway.',
  },
  {
    id: /^Alarms\/StorageUnavailable$/,
    section: 'StorageUnavailable',
    means: 'Requests were answered 503 because DynamoDB did not answer in time.',
  },
  {
    id: /^Alarms\/AuthorizerFailure$/,
    section: 'AuthorizerFailure',
    means: 'The authorizer could not look keys up: every uncached request got 503 (it fails closed).',
  },
  {
    id: /^GatewayRefusals\/RefusingCustomers$/,
    section: 'Gateway refusing customers',
    means:
      'API Gateway itself answered customers 429 (a usage plan, the stage throttle or the account throttle) before any function ran: a hop is at capacity.',
  },
  {
    id: /^Deploy\/\w+DenialRate$/,
    section: 'Deploy gate: authorizer denial rate',
    means:
      'During a deploy the new authorizer denied or failed more than the old one predicts: CodeDeploy rolls it back.',
  },
  {
    id: /^Deploy\/\w+Errors$/,
    section: 'Deploy gate: Lambda errors',
    means: 'During a deploy the new version failed more than the old one: CodeDeploy rolls it back.',
  },
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** The alarm id of an alarm's CloudFormation resource: its construct path in the stack, without `/Resource`. */
export const alarmIdOf = (alarm: CfnAlarm): string =>
  alarm.node.path
    .split('/')
    .slice(Stack.of(alarm).node.path.split('/').length)
    .filter((part) => part !== 'Resource')
    .join('/');

export const runbookEntryFor = (alarmId: string): RunbookEntry | undefined =>
  ALARM_RUNBOOK.find((e) => e.id.test(alarmId));

/** What an alarm's description becomes: what it watches (as its construct said), what that means, where to look. */
export const withRunbook = (description: string, entry: RunbookEntry): string =>
  `${description}. ${entry.means} Runbook: ${RUNBOOK_PATH}#${slug(entry.section)}`;

class LinkRunbooks implements IAspect {
  private readonly done = new WeakSet<IConstruct>();

  visit(node: IConstruct): void {
    if (!(node instanceof CfnAlarm) || this.done.has(node)) return;
    this.done.add(node);
    const id = alarmIdOf(node);
    const entry = runbookEntryFor(id);
    const description = node.alarmDescription ?? '';
    if (!entry || Token.isUnresolved(description)) {
      Annotations.of(node).addWarningV2('animal-store:runbook', `alarm ${id} has no section in ${RUNBOOK_PATH}`);
      return;
    }
    node.alarmDescription = withRunbook(description, entry);
  }
}

/** Links every alarm of the scope's stack to its runbook section (once per stack, however often it is called). */
export function linkAlarmRunbooks(scope: IConstruct): void {
  const stack = Stack.of(scope);
  if (linked.has(stack)) return;
  linked.add(stack);
  Aspects.of(stack).add(new LinkRunbooks(), { priority: AspectPriority.MUTATING });
}
const linked = new WeakSet<Stack>();
