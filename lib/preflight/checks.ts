/**
 * The checks `npm run preflight` runs on one stage's synthesized template, each an entry of PREFLIGHT_CHECKS: it
 * returns one line per finding (none: the check passed) or throws (reported as a finding too). A new check is one
 * more entry.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { grantsThatCannotApply } from './authorization-reference.ts';
import { accountQuotasCheck } from './account-quotas.ts';
import { accountShareCheck } from './account-share.ts';
import { checkKeyCheck } from './check-key.ts';
import { gatesThatCannotFire } from './canary-timing.ts';
import { replacementsInDiff, runCdkDiff } from './cdk-diff.ts';
import type { DeployedStack } from './deployed.ts';
import { contextArgs } from './context-words.ts';
import { nextStep } from './stack-status.ts';
import type { CfnTemplate } from './template.ts';
import { unorderedUsagePlans, updateFindings } from './update-rules.ts';

export type { DeployedStack } from './deployed.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface PreflightInput {
  readonly stage: string;
  readonly stackName: string;
  /** The stack's first-deploy name: the stage, or `account` (what `npm run walk-back -- --stage` takes). */
  readonly name: string;
  /** The synthesized template's file (for tools that read files). */
  readonly templatePath: string;
  readonly template: CfnTemplate;
  /** Errors of the synth for this stack: its error annotations and cdk-nag's unacknowledged findings. */
  readonly synthErrors: readonly string[];
  /** `--previous <template.json>`: the template deployed last, as the pipeline kept it. */
  readonly previous?: CfnTemplate;
  /** Whether the stack's manifest turns termination protection on (the CLI does it before executing a create). */
  readonly terminationProtection: boolean;
  /** Whether the synth was a first deploy (`-c animal-store:<stage>:firstDeploy=true`). */
  readonly firstDeploy: boolean;
  /** The `-c` values the synth had (cdk diff gets the same). */
  readonly context: Readonly<Record<string, string>>;
  /** Runs `cdk diff` on the stack with that context (only where the deployed stack is visible). @default the CLI */
  readonly cdkDiff?: (stackName: string, context: Readonly<Record<string, string>>) => string;
  /** The first-deploy context key of this stack, for the lines that name it. */
  readonly firstDeployKey: string;
  /** The deployed stack (CloudFormation DescribeStacks and GetTemplate with this machine's AWS credentials). */
  readonly deployed: () => Promise<DeployedStack>;
  /** Lines that are not findings (a check skipped, and why). */
  readonly note: (line: string) => void;
}

export interface PreflightCheck {
  readonly name: string;
  readonly run: (input: PreflightInput) => readonly string[] | Promise<readonly string[]>;
}

/** The synth itself: cdk-nag (AwsSolutions) findings nobody acknowledged, and the stack's error annotations. */
export const synthCheck: PreflightCheck = { name: 'synth and cdk-nag', run: (input) => input.synthErrors };

/** AWS's CloudFormation linter with the repository's settings (.cfnlintrc.yaml), as test/infra/cfn-lint.test.ts. */
export const cfnLintCheck: PreflightCheck = {
  name: 'cfn-lint',
  run: (input) => {
    const run = spawnSync(
      'cfn-lint',
      ['--config-file', `${ROOT}.cfnlintrc.yaml`, '--format', 'parseable', '--', input.templatePath],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    if (run.error) return [`cfn-lint: not runnable (${run.error.message}); install it with pipx install cfn-lint`];
    return `${run.stdout}${run.stderr}`
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => `cfn-lint: ${l.replace(input.templatePath, input.stackName)}`);
  },
};

/** Rules on the template alone: usage plans one at a time, gates that can fire within the canary. */
export const templateRulesCheck: PreflightCheck = {
  name: 'template rules',
  run: (input) => [...unorderedUsagePlans(input.template), ...gatesThatCannotFire(input.template)],
};

/** The update rules, the follow rule among them, against the template the pipeline deployed last (`--previous`). */
export const previousTemplateCheck: PreflightCheck = {
  name: 'update rules (--previous)',
  run: (input) => {
    if (!input.previous) {
      input.note('update rules: no --previous template given: skipped');
      return [];
    }
    return updateFindings(input.previous, input.template, undefined, input.stage);
  },
};

/** Whether a failed create of this template could not be retried: termination protection, or a table's deletion protection. */
function protectedAgainstRollback(input: PreflightInput): boolean {
  return (
    input.terminationProtection ||
    Object.values(input.template.Resources).some(
      (r) =>
        r.Type === 'AWS::DynamoDB::GlobalTable' &&
        ((r.Properties?.Replicas as { DeletionProtectionEnabled?: boolean }[]) ?? []).some(
          (x) => x.DeletionProtectionEnabled,
        ),
    )
  );
}

/**
 * The deployed stack, where this machine has AWS credentials: its status and termination protection give the one
 * next step (lib/preflight/stack-status.ts: a finding unless it is a plain deploy; the walk-back's names the tables
 * still protected), and a settled stack's template
 * gets the update rules (what `cdk diff` compares with).
 */
export const deployedStackCheck: PreflightCheck = {
  name: 'deployed stack',
  run: async (input) => {
    const deployed = await input.deployed();
    if (deployed.state === 'unknown') {
      input.note(`deployed stack: ${input.stackName}: ${deployed.why}: skipped`);
      return [];
    }
    const step = nextStep(
      {
        stackName: input.stackName,
        firstDeployKey: input.firstDeployKey,
        firstDeploy: input.firstDeploy,
        protectedTemplate: protectedAgainstRollback(input),
        deployArgs: contextArgs(input.context, input.firstDeployKey),
        name: input.name,
      },
      deployed,
    );
    const findings =
      deployed.state === 'present' && deployed.template
        ? updateFindings(deployed.template, input.template, undefined, input.stage).map(
            (l) => `${l} (against the deployed stack)`,
          )
        : [];
    return step.finding ? [...findings, step.finding] : findings;
  },
};

/**
 * `cdk diff` against the deployed stack (only where the stack exists and this machine can see it): any replacement
 * or removal of a stateful or fixed-name resource it reports, CloudFormation's change set having the last word on
 * what a create-only property change does.
 */
export const cdkDiffCheck: PreflightCheck = {
  name: 'cdk diff',
  run: async (input) => {
    const deployed = await input.deployed();
    if (deployed.state !== 'present' || !deployed.template) {
      input.note(`cdk diff: ${input.stackName}: no settled deployed stack visible: skipped`);
      return [];
    }
    return replacementsInDiff((input.cdkDiff ?? runCdkDiff)(input.stackName, input.context));
  },
};

/**
 * Every grant of the template names a resource of a type AWS authorizes its action on (AWS's Service Authorization
 * Reference): a grant that can never apply is denied in AWS while every local test passes. The account and Region
 * only fill the ARNs' shapes, so any well-formed values do where the stage has none.
 */
export const authorizationReferenceCheck: PreflightCheck = {
  name: 'authorization reference',
  run: (input) =>
    grantsThatCannotApply(input.stackName, input.template as Parameters<typeof grantsThatCannotApply>[1], {
      account: '123456789012',
      region: process.env.AWS_REGION ?? 'us-east-1',
      stackName: input.stackName,
    }),
};

/** Every check, in the order they run. */
export const PREFLIGHT_CHECKS: PreflightCheck[] = [
  synthCheck,
  cfnLintCheck,
  templateRulesCheck,
  previousTemplateCheck,
  deployedStackCheck,
  // Only with AWS credentials: the account has the Lambda executions and API throttle the stage is sized for.
  accountQuotasCheck(),
  // Only with AWS credentials: the stages in this account and Region claim at most the whole account between them.
  accountShareCheck(),
  // Only with AWS credentials, on an existing stack: the pre-traffic hook's key exists, else every deploy rolls back.
  checkKeyCheck(),
  authorizationReferenceCheck,
  cdkDiffCheck,
];

/** Runs each check; a check that throws is a finding of its own. Findings are prefixed with nothing more. */
export async function runChecks(input: PreflightInput, checks = PREFLIGHT_CHECKS): Promise<string[]> {
  const findings: string[] = [];
  for (const check of checks) {
    try {
      findings.push(...(await check.run(input)));
    } catch (e) {
      findings.push(`${check.name}: failed to run: ${(e as Error).message}`);
    }
  }
  return findings;
}
