/**
 * Preflight's check that the stages in one account and Region claim no more than the account. API Gateway's
 * throttle and Lambda's concurrency are the account's, and each stage is sized to its share (`AccountShare`
 * output). Shares summing past 1 let a load test on staging take production's customers to 429.
 * One paged DescribeStacks reads every stack: the stages' own, and any other with an `AccountShare` output, at its
 * share. A stage's stack without the output counts 1 (it was sized to the whole account). An empty stack (a failed
 * create rolled back, a change set never run) or an absent one counts 0. Credentials limited to named stacks still
 * get the stages' stacks, with a note. Reads only; skipped with a note without AWS credentials.
 */
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages.ts';
import { OUTPUT_IDS } from '../stacks/outputs.ts';
import type { PreflightCheck } from './checks.ts';
import type { CloudFormationSend } from './deployed.ts';
import { awsReadFailure, isAccessDenied } from './read-failure.ts';
import type { CfnTemplate } from './template.ts';

/** Another stack of the account and Region as DescribeStacks gives it. */
export interface SharingStack {
  readonly stackName: string;
  readonly status: string;
  /** The `AccountShare` output's value; absent on a stack deployed before the output existed. */
  readonly accountShare?: string;
}

/** The other stacks, with a note where only some could be read; why there are none (a note); or a failed read. */
export type AccountShareSource = (
  ownStackName: string,
) => Promise<
  | { readonly stacks: readonly SharingStack[]; readonly note?: string }
  | { readonly skip: string }
  | { readonly finding: string }
>;

/** The IAM action the check's reads need (on `*` to list every stack; on the stages' stacks at least). */
export const ACCOUNT_SHARE_READ_ACTIONS = 'cloudformation:DescribeStacks on *';

/** Statuses of a stack that holds no resource: nothing of it takes the account's throughput. */
const HOLDS_NOTHING: ReadonlySet<string> = new Set(['REVIEW_IN_PROGRESS', 'ROLLBACK_COMPLETE', 'DELETE_COMPLETE']);

/** The context key that sets a stage's share. */
export const accountShareKey = (stage: string): string => `animal-store:${stage}:accountShare`;

/** The stage a stack name is the stack of, if any. */
const stageOf = (stackName: string): StageName | undefined =>
  STAGE_NAMES.find((s) => STAGES[s].stackName === stackName);

/** A share as an output or template gives it: a number in (0, 1], else undefined. */
export function parseShare(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : typeof value === 'number' ? value : NaN;
  return n > 0 && n <= 1 ? n : undefined;
}

/** This deploy's share: the synthesized template's `AccountShare` output (context applied); none counts 1. */
export function templateShare(template: CfnTemplate): number {
  const outputs = (template as { Outputs?: Record<string, { Value?: unknown }> }).Outputs;
  return parseShare(outputs?.[OUTPUT_IDS.accountShare]?.Value) ?? 1;
}

/** A share that counts against the account, and what the finding says of it. */
interface Counted {
  readonly stackName: string;
  readonly stage?: StageName;
  readonly share: number;
  readonly said: string;
}

/** The other stacks that count against the account, at their shares. */
export function countedShares(ownStackName: string, stacks: readonly SharingStack[]): Counted[] {
  return stacks.flatMap((s): Counted[] => {
    const stage = stageOf(s.stackName);
    if (s.stackName === ownStackName || HOLDS_NOTHING.has(s.status)) return [];
    if (s.accountShare === undefined)
      return stage
        ? [{ stackName: s.stackName, stage, share: 1, said: '1 (no AccountShare output: sized to the whole account)' }]
        : [];
    const share = parseShare(s.accountShare);
    return [
      share === undefined
        ? { stackName: s.stackName, stage, share: 1, said: `1 (AccountShare "${s.accountShare}" unreadable)` }
        : { stackName: s.stackName, stage, share, said: String(share) },
    ];
  });
}

/** Shares are offered in hundredths, rounded down so that they still fit. */
const hundredthsDown = (x: number) => Math.floor(x * 100 + 1e-9) / 100;
/** Sums of decimal shares are off by float error (0.7 + 0.2 + 0.1); a hair over 1 is 1. */
const EPSILON = 1e-9;

/**
 * Shares that fit, changing as few deploys as it can: this stage alone, to what the others leave; else the others,
 * in proportion, to what this stage's share leaves; else every one in proportion.
 */
function fittingShares(own: number, others: readonly Counted[]): { own: number; others: number[] } | undefined {
  const rest = others.reduce((n, o) => n + o.share, 0);
  const fit = (shares: number[]) => (shares.every((s) => s >= 0.01) ? shares : undefined);
  if (hundredthsDown(1 - rest) >= 0.01) return { own: hundredthsDown(1 - rest), others: others.map((o) => o.share) };
  const scaled = own < 1 ? fit(others.map((o) => hundredthsDown((o.share * (1 - own)) / rest))) : undefined;
  if (scaled) return { own, others: scaled };
  const total = own + rest;
  const all = fit([own, ...others.map((o) => o.share)].map((s) => hundredthsDown(s / total)));
  return all && { own: all[0]!, others: all.slice(1) };
}

/** The one finding when this stage's share and the others' sum past the account (none when they fit). */
export function accountShareFindings(opts: {
  readonly stage: string;
  readonly stackName: string;
  readonly share: number;
  readonly others: readonly Counted[];
}): string[] {
  const { stage, stackName, share, others } = opts;
  const total = others.reduce((n, o) => n + o.share, share);
  if (total <= 1 + EPSILON) return [];
  const terms = [`${stackName} ${share} (this deploy)`, ...others.map((o) => `${o.stackName} ${o.said}`)];
  const fitting = fittingShares(share, others);
  const steps: string[] = [];
  others.forEach((o, i) => {
    const to = fitting?.others[i];
    if (to === undefined || to === o.share) return;
    steps.push(
      o.stage
        ? `deploy ${o.stackName} first with -c ${accountShareKey(o.stage)}=${to}`
        : `lower ${o.stackName}'s AccountShare to ${to} first (not a stage of this app: where it is deployed from)`,
    );
  });
  if (fitting && fitting.own !== share) steps.push(`deploy this one with -c ${accountShareKey(stage)}=${fitting.own}`);
  return [
    `account share: ${terms.join(' + ')} = ${Number(total.toFixed(6))} of this account and Region's API throttle ` +
      `and Lambda concurrency, past 1: each stage is sized for throughput only one can get, so load on one takes the ` +
      `other's customers to 429. ${steps.length ? `Set shares that sum to at most 1: ${steps.join(', then ')}; or` : 'Lower the shares so they sum to at most 1, or'} ` +
      `deploy each stage to an account of its own (the default: -c animal-store:<stage>:account=…)`,
  ];
}

/** Every stack of the account and Region (one paged DescribeStacks); a refusal falls back to the stages' by name. */
export async function readSharingStacks(
  cfn: CloudFormationSend,
  ownStackName: string,
): Promise<{ stacks: SharingStack[]; note?: string }> {
  const { DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  type Described = {
    StackName?: string;
    StackStatus?: string;
    Outputs?: { OutputKey?: string; OutputValue?: string }[];
  };
  const of = (s: Described): SharingStack => {
    const out = s.Outputs?.find((o) => o.OutputKey === OUTPUT_IDS.accountShare);
    return {
      stackName: s.StackName ?? '',
      status: s.StackStatus ?? '',
      ...(out ? { accountShare: out.OutputValue ?? '' } : {}),
    };
  };
  const stacks: SharingStack[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await cfn.send(new DescribeStacksCommand({ NextToken: token }));
      stacks.push(...(page.Stacks ?? []).map(of));
      token = page.NextToken;
    } while (token);
    return { stacks };
  } catch (err) {
    if (!isAccessDenied(err)) throw err;
    // A role allowed to describe only named stacks still sees the stages': the ones that matter most.
    for (const stage of STAGE_NAMES) {
      const name = STAGES[stage].stackName;
      if (name === ownStackName) continue;
      try {
        const got = await cfn.send(new DescribeStacksCommand({ StackName: name }));
        stacks.push(...(got.Stacks ?? []).map(of));
      } catch (e2) {
        if (!/does not exist/.test((e2 as Error).message)) throw e2;
      }
    }
    return {
      stacks,
      note:
        `account share: could not list the account's stacks (${(err as Error).name}), so only the stages' stacks ` +
        `were read by name; grant ${ACCOUNT_SHARE_READ_ACTIONS} to count every stack with an AccountShare output`,
    };
  }
}

/** The other stacks with this machine's credentials. */
export const awsAccountShares: AccountShareSource = async (ownStackName) => {
  const { machineCredentialsProblem } = await import('./deployed.ts');
  const why = await machineCredentialsProblem();
  if (why) return { skip: why };
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const cfn = new CloudFormationClient({});
  try {
    return await readSharingStacks(cfn, ownStackName);
  } catch (err) {
    return {
      finding: awsReadFailure('account share', "the account's stacks", ACCOUNT_SHARE_READ_ACTIONS, err),
    };
  } finally {
    cfn.destroy();
  }
};

/** The check; `source` is a stand-in in tests. Only a stage's stack has a share (the account stack has none). */
export function accountShareCheck(source: AccountShareSource = awsAccountShares): PreflightCheck {
  return {
    name: 'account share',
    run: async (input) => {
      if (input.name !== input.stage) return [];
      const read = await source(input.stackName);
      if ('skip' in read) {
        input.note(`account share: ${read.skip}: skipped`);
        return [];
      }
      if ('finding' in read) return [read.finding];
      if (read.note) input.note(read.note);
      return accountShareFindings({
        stage: input.stage,
        stackName: input.stackName,
        share: templateShare(input.template),
        others: countedShares(input.stackName, read.stacks),
      });
    },
  };
}
