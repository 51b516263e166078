/**
 * The CDK app: one stack per stage (AnimalStore-staging, AnimalStore-production), cdk-nag AwsSolutions checks on
 * every synth. Account/region: context `animal-store:<stage>:account` / `:region`, else CDK_DEFAULT_*.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { STAGES, STAGE_NAMES } from '../lib/config/stages.ts';
import { AnimalStoreStack } from '../lib/stacks/animal-store-stack.ts';

const app = new App();
for (const name of STAGE_NAMES) {
  const stage = STAGES[name];
  const account = app.node.tryGetContext(`animal-store:${name}:account`) ?? stage.account;
  const region = app.node.tryGetContext(`animal-store:${name}:region`) ?? stage.region;
  new AnimalStoreStack(app, stage.stackName, {
    stage,
    stackName: stage.stackName,
    description: `Animal Store API (${name})`,
    ...(account || region ? { env: { account, region } } : {}),
    tags: { project: 'animal-store', stage: name },
  });
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
