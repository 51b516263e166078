import { Annotations, App, Validations, type AppProps } from 'aws-cdk-lib';
import { ROUTES } from '../../contract/routes.ts';
import { capacityRows, shortfalls } from '../config/capacity.ts';
import { requestUnitCeiling } from '../constructs/data-tables.ts';
import { AwsSolutionsChecks } from 'cdk-nag';
import {
  STAGES,
  STAGE_NAMES,
  contextProblems,
  withAccountQuotas,
  type StageConfig,
  type StageName,
} from '../config/stages.ts';
import { AccountSettingsStack, ACCOUNT_SETTINGS_STACK } from './account-settings-stack.ts';
import { AnimalStoreStack } from './animal-store-stack.ts';
import { isFirstDeploy, warnFirstDeploy } from './first-deploy.ts';

/**
 * The CDK app: one stack per stage, plus the account settings stack (once per account and Region), cdk-nag
 * AwsSolutions checks on every synth. Account and region per stage: context `animal-store:<stage>:account` /
 * `animal-store:<stage>:region`, else the stage config; with neither the stack is environment-agnostic (never the
 * CLI's CDK_DEFAULT_REGION, which is us-east-1 when nothing is set). A stage with `requireAccount` (production)
 * refuses to synthesize without an account: an error on the stack, so `cdk synth|deploy` of that stack fails with
 * one line while the other stages still synthesize and deploy.
 */
/**
 * A stage sized below the contracts we sell (a share of an account, an account's low quotas) refuses customers inside
 * their contracts: each such hop, one line, with where the figure to ask for is.
 */
export function undersized(stage: StageConfig): string[] {
  const rows = capacityRows({ ...stage, tableMaxUnits: requestUnitCeiling(stage.stageThrottle, ROUTES.length) });
  return shortfalls(rows).map(
    (r) =>
      `${stage.stackName}: ${r.hop} is ${r.capacity.toLocaleString('en-US')} ${r.unit}, below what the contracts sold ask of it (${r.demand.toLocaleString('en-US')}): raise the account's quotas (npm run capacity -- --stage ${stage.name} names them) or give the stage an account of its own`,
  );
}

export function createApp(props: AppProps = {}): {
  app: App;
  stacks: Record<StageName, AnimalStoreStack>;
  accountSettings: AccountSettingsStack;
} {
  const app = new App(props);
  const accountFirstDeploy = isFirstDeploy(app, 'account');
  const accountSettings = new AccountSettingsStack(app, ACCOUNT_SETTINGS_STACK, {
    stackName: ACCOUNT_SETTINGS_STACK,
    description: 'Animal Store: account-wide settings (API Gateway CloudWatch Logs role), once per account and Region',
    // Off for its first deploy, so a failed create can be retried (first-deploy.ts).
    terminationProtection: !accountFirstDeploy,
    tags: { project: 'animal-store' },
  });
  if (accountFirstDeploy) warnFirstDeploy(accountSettings, 'account');
  const stacks = {} as Record<StageName, AnimalStoreStack>;
  for (const name of STAGE_NAMES) {
    // A first deploy goes out without the protections that would strand a failed create (first-deploy.ts).
    const firstDeploy = isFirstDeploy(app, name);
    // Quotas the account was granted (context) size the edge again (capacity.ts).
    const base = withAccountQuotas(STAGES[name], (key) => app.node.tryGetContext(key));
    const stage: StageConfig = firstDeploy
      ? { ...base, terminationProtection: false, deletionProtection: false }
      : base;
    const account = app.node.tryGetContext(`animal-store:${name}:account`) ?? stage.account;
    const problems = contextProblems(name, (key) => app.node.tryGetContext(key));
    // A malformed Region is reported below like every other bad value, not thrown by the CDK's env parser.
    const givenRegion = app.node.tryGetContext(`animal-store:${name}:region`);
    const region = (problems.some((p) => p.includes(':region=')) ? undefined : givenRegion) ?? stage.region;
    const stack = new AnimalStoreStack(app, stage.stackName, {
      stage,
      stackName: stage.stackName,
      description: `Animal Store API (${name})`,
      ...(account || region ? { env: { account, region } } : {}),
      terminationProtection: stage.terminationProtection,
      tags: { project: 'animal-store', stage: name },
    });
    for (const problem of problems) Annotations.of(stack).addError(problem);
    if (stage.requireAccount && !account)
      Annotations.of(stack).addError(
        `${stage.stackName} needs its account pinned: -c animal-store:${name}:account=<12-digit account id> (so a shell pointed at another account cannot deploy it there)`,
      );
    // A stage's API writes its logs with the account's API Gateway role, which AnimalStore-account sets: a stage
    // created before it fails to create its stage. `cdk deploy --all` (and `cdk deploy <stage>`, which deploys a
    // stack's dependencies unless --exclusively) deploys the account stack first.
    stack.addStackDependency(accountSettings, 'API Gateway needs the account CloudWatch Logs role before a stage logs');
    if (firstDeploy) warnFirstDeploy(stack, name);
    for (const line of undersized(stage)) Annotations.of(stack).addWarningV2('animal-store:capacity', line);
    stacks[name] = stack;
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks, accountSettings };
}
