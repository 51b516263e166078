/**
 * What both deploy hooks ask CodeDeploy (the pre-traffic check and the bake): the deployment's AppSpec and creation
 * time, and the hook's report. One client for both entries.
 */
import {
  CodeDeployClient,
  GetDeploymentCommand,
  PutLifecycleEventHookExecutionStatusCommand,
} from '@aws-sdk/client-codedeploy';
import type { LifecycleHookEvent } from './pre-traffic-hook.ts';

// More attempts than the SDK's 3: a report lost to a throttle leaves CodeDeploy waiting an hour before it fails the
// deployment. The SDK's own backoff spaces them (up to 20 s apart).
const codeDeploy = new CodeDeployClient({ maxAttempts: 8 });

/** GetDeployment: the AppSpec's text, and when the deployment was created (epoch ms) when CodeDeploy says. */
export async function deploymentOf(deploymentId: string): Promise<{ appSpec: string; createdAt?: number }> {
  const d = await codeDeploy.send(new GetDeploymentCommand({ deploymentId }));
  const info = d.deploymentInfo;
  // A deployment CloudFormation starts for an alias carries its AppSpec as content of one of these two kinds.
  const appSpec = info?.revision?.appSpecContent?.content ?? info?.revision?.string?.content;
  if (!appSpec) throw new Error(`deployment ${deploymentId} has no AppSpec content`);
  return { appSpec, ...(info?.createTime ? { createdAt: info.createTime.getTime() } : {}) };
}

/** PutLifecycleEventHookExecutionStatus for the hook execution CodeDeploy handed this invocation. */
export async function reportHook(event: LifecycleHookEvent, status: 'Succeeded' | 'Failed'): Promise<void> {
  await codeDeploy.send(
    new PutLifecycleEventHookExecutionStatusCommand({
      deploymentId: event.DeploymentId,
      lifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
      status,
    }),
  );
}
