/**
 * Preflight on a deployed stack in each state CloudFormation can leave it in, read through a stand-in for the
 * CloudFormation client (DescribeStacks, GetTemplate): production's protected template and staging's unprotected
 * one, each with and without the first-deploy switch, and the one next step each combination gets.
 */
import type { DescribeStacksCommandOutput, GetTemplateCommandOutput } from '@aws-sdk/client-cloudformation';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployedStackCheck, type PreflightInput } from '../../lib/preflight/checks.ts';
import { readDeployedStack, type CloudFormationSend } from '../../lib/preflight/deployed.ts';
import { preflight } from '../../lib/preflight/run.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';
import { PRODUCTION_CONTEXT, SYNTH_CONTEXT } from './synth-context.ts';

type Stage = 'staging' | 'production';
const KEY = { staging: firstDeployContextKey('staging'), production: firstDeployContextKey('production') };

/** A CloudFormation client that knows one stack (or none): DescribeStacks as AWS answers it, GetTemplate. */
function cloudFormation(template: CfnTemplate, stack?: { status: string; protected: boolean }): CloudFormationSend {
  return {
    send: (async (command: { constructor: { name: string }; input: { StackName?: string } }) => {
      if (!stack) throw new Error(`Stack with id ${command.input.StackName} does not exist`);
      if (command.constructor.name === 'DescribeStacksCommand')
        return {
          Stacks: [
            {
              StackName: command.input.StackName,
              StackStatus: stack.status,
              EnableTerminationProtection: stack.protected,
            },
          ],
        } as Partial<DescribeStacksCommandOutput>;
      if (command.constructor.name === 'GetTemplateCommand')
        return { TemplateBody: JSON.stringify(template) } as Partial<GetTemplateCommandOutput>;
      throw new Error(`unexpected ${command.constructor.name}`);
    }) as CloudFormationSend['send'],
  };
}

/** Each stage's template and manifest protection, as a deploy with and without the switch synthesizes them. */
const synthesized = {} as Record<Stage, Record<'plain' | 'switch', { template: CfnTemplate; tp: boolean }>>;
beforeAll(() => {
  for (const stage of ['staging', 'production'] as const)
    synthesized[stage] = Object.fromEntries(
      (['plain', 'switch'] as const).map((how) => {
        const context = { ...SYNTH_CONTEXT, ...(how === 'switch' ? { [KEY[stage]]: 'true' } : {}) };
        const stack = createApp({ context }).stacks[stage];
        return [how, { template: Template.fromStack(stack).toJSON() as CfnTemplate, tp: stack.terminationProtection }];
      }),
    ) as (typeof synthesized)[Stage];
}, 240_000);

/** The deployed-stack check's lines for one stage, switch and deployed state. */
async function linesFor(stage: Stage, withSwitch: boolean, deployed?: { status: string; protected: boolean }) {
  const { template, tp } = synthesized[stage][withSwitch ? 'switch' : 'plain'];
  const stackName = `AnimalStore-${stage}`;
  const context: Record<string, string> = {
    ...(stage === 'production' ? PRODUCTION_CONTEXT : {}),
    ...(withSwitch ? { [KEY[stage]]: 'true' } : {}),
  };
  const input = {
    stage,
    stackName,
    name: stage,
    template,
    terminationProtection: tp,
    firstDeploy: withSwitch,
    firstDeployKey: KEY[stage],
    context,
    // What was deployed last is this very template: the update rules find nothing, only the status speaks.
    deployed: () => readDeployedStack(cloudFormation(template, deployed), stackName),
    note: () => {},
  } as unknown as PreflightInput;
  return deployedStackCheck.run(input);
}

const PROD = 'AnimalStore-production';
const deployProd = `npx cdk deploy ${PROD} -c animal-store:production:account=123456789012 -c animal-store:production:alarmEmails=ops@example.com`;
const ADD_SWITCH = new RegExp(`: deploy it with ${deployProd} -c ${KEY.production}=true, so a failed create`);
const WALK_BACK = new RegExp(
  `: walk it back with npm run walk-back -- --stage production ${deployProd.slice(`npx cdk deploy ${PROD} `.length)} \\(it deletes .*\\), then ${deployProd} -c ${KEY.production}=true$`,
);
const CONTINUE = new RegExp(`aws cloudformation continue-update-rollback --stack-name ${PROD}`);
const IMPORT_FAILED = new RegExp(
  `is IMPORT_ROLLBACK_FAILED: .*documented for UPDATE_ROLLBACK_FAILED only: read why \\(aws cloudformation describe-stack-events --stack-name ${PROD}\\)`,
);
const DELETE_FAILED = new RegExp(
  `walk it back with npm run walk-back .* If it is a stack that holds data .*aws cloudformation delete-stack --stack-name ${PROD} again, or --retain-resources`,
);
const DROP = new RegExp(`it exists, so drop -c ${KEY.production}=true`);
const WAIT = (waiter: string) =>
  new RegExp(`: wait for it to finish \\(aws cloudformation wait ${waiter} --stack-name ${PROD}\\)`);

// [status, termination protection, next step without the switch, with it]: undefined = a plain deploy, no finding.
const PRODUCTION: [string | 'absent', boolean, RegExp | undefined, RegExp | undefined][] = [
  ['absent', false, ADD_SWITCH, undefined],
  ['CREATE_COMPLETE', true, undefined, DROP],
  ['UPDATE_ROLLBACK_COMPLETE', true, undefined, DROP],
  ['ROLLBACK_COMPLETE', false, ADD_SWITCH, undefined],
  ['ROLLBACK_COMPLETE', true, WALK_BACK, WALK_BACK],
  ['ROLLBACK_FAILED', true, WALK_BACK, WALK_BACK],
  ['ROLLBACK_FAILED', false, WALK_BACK, WALK_BACK],
  ['REVIEW_IN_PROGRESS', false, ADD_SWITCH, undefined],
  // The CLI sets termination protection to the template's before it executes the create: the switch clears it.
  ['REVIEW_IN_PROGRESS', true, ADD_SWITCH, undefined],
  ['UPDATE_ROLLBACK_FAILED', true, CONTINUE, CONTINUE],
  // continue-update-rollback is documented for UPDATE_ROLLBACK_FAILED only.
  ['IMPORT_ROLLBACK_FAILED', true, IMPORT_FAILED, IMPORT_FAILED],
  // A walk-back stopped partway, or a stack with data someone deleted: both ways are named.
  ['DELETE_FAILED', true, DELETE_FAILED, DELETE_FAILED],
  ['CREATE_IN_PROGRESS', true, WAIT('stack-create-complete'), WAIT('stack-create-complete')],
  ['UPDATE_IN_PROGRESS', true, WAIT('stack-update-complete'), WAIT('stack-update-complete')],
  ['UPDATE_ROLLBACK_IN_PROGRESS', true, WAIT('stack-rollback-complete'), WAIT('stack-rollback-complete')],
  ['DELETE_IN_PROGRESS', false, WAIT('stack-delete-complete'), WAIT('stack-delete-complete')],
  [
    'ROLLBACK_IN_PROGRESS',
    true,
    /: wait for it to finish \(aws cloudformation describe-stacks/,
    /: wait for it to finish/,
  ],
];

describe('production (termination protection, tables with deletion protection)', () => {
  for (const [status, tp, plain, withSwitch] of PRODUCTION)
    for (const [on, expected] of [
      [false, plain],
      [true, withSwitch],
    ] as const)
      it(`${status}${status === 'absent' ? '' : tp ? ', protected' : ', unprotected'}, ${on ? 'with' : 'without'} the switch: ${expected ? 'one next step' : 'deploy'}`, async () => {
        const lines = await linesFor('production', on, status === 'absent' ? undefined : { status, protected: tp });
        expect(lines).toEqual(expected ? [expect.stringMatching(expected)] : []);
      });
});

describe('staging (no protection to strand a failed create)', () => {
  it.each([
    ['absent', undefined],
    ['ROLLBACK_COMPLETE', undefined],
    ['REVIEW_IN_PROGRESS', undefined],
    ['UPDATE_COMPLETE', undefined],
    // The rollback failed on a resource it could not delete, which the CLI's delete-before-retry meets again.
    ['ROLLBACK_FAILED', /walk it back with npm run walk-back -- --stage staging \(/],
    ['UPDATE_ROLLBACK_FAILED', /continue-update-rollback --stack-name AnimalStore-staging/],
    ['UPDATE_IN_PROGRESS', /wait stack-update-complete --stack-name AnimalStore-staging/],
  ] as const)('%s without the switch', async (status, expected) => {
    const lines = await linesFor('staging', false, status === 'absent' ? undefined : { status, protected: false });
    expect(lines).toEqual(expected ? [expect.stringMatching(expected)] : []);
  });
});

it("covers the account stack that a stage's deploy deploys first, unless --exclusively", async () => {
  const seen: string[] = [];
  const run = (exclusively: boolean, context: Record<string, string>) =>
    preflight({
      stage: 'staging',
      context,
      exclusively,
      checks: [deployedStackCheck],
      deployed: async (stackName) => (seen.push(stackName), { state: 'absent' }),
    });
  expect((await run(false, {})).findings).toEqual([
    expect.stringMatching(
      /^AnimalStore-account: deployed stack: AnimalStore-account is absent: deploy it with npx cdk deploy AnimalStore-account -c animal-store:account:firstDeploy=true/,
    ),
  ]);
  expect(seen).toEqual(['AnimalStore-account', 'AnimalStore-staging']);
  expect((await run(false, { [firstDeployContextKey('account')]: 'true' })).findings).toEqual([]);
  expect((await run(true, {})).findings).toEqual([]);
}, 240_000);
