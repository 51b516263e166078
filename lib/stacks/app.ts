import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES, STAGE_NAMES, type StageName } from '../config/stages.ts';
import { AnimalStoreStack } from './animal-store-stack.ts';

/**
 * The CDK app: one stack per stage, cdk-nag AwsSolutions checks on every synth. Account and region per stage:
 * context `animal-store:<stage>:account` / `animal-store:<stage>:region`, else the stage config; with neither the
 * stack is environment-agnostic (never the CLI's CDK_DEFAULT_REGION, which is us-east-1 when nothing is set).
 */
export function createApp(props: AppProps = {}): { app: App; stacks: Record<StageName, AnimalStoreStack> } {
  const app = new App(props);
  const stacks = {} as Record<StageName, AnimalStoreStack>;
  for (const name of STAGE_NAMES) {
    const stage = STAGES[name];
    const account = app.node.tryGetContext(`animal-store:${name}:account`) ?? stage.account;
    const region = app.node.tryGetContext(`animal-store:${name}:region`) ?? stage.region;
    stacks[name] = new AnimalStoreStack(app, stage.stackName, {
      stage,
      stackName: stage.stackName,
      description: `Animal Store API (${name})`,
      ...(account || region ? { env: { account, region } } : {}),
      tags: { project: 'animal-store', stage: name },
    });
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stacks };
}
