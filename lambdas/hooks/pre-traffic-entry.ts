/**
 * The Lambda entry of the pre-traffic hook (lib/constructs/pre-traffic-hook.ts deploys it): the hook's ports over
 * the AWS SDK. It reads the deployment (codedeploy:GetDeployment), invokes `<function>:<target version>` and
 * `<function>:<current version>` (the one it is compared with), the live authorizer and, for getPet, the live
 * listPets (lambda:InvokeFunction on qualified ARNs only), reads the check's own keys, one per plan (Secrets
 * Manager), and reports (codedeploy:PutLifecycleEventHookExecutionStatus); its role allows exactly that. A Lambda
 * error of the function invoked is the version's answer; an error of the Invoke call itself (throttled, denied)
 * rejects, and the check counts it as judging neither version.
 */
import { deploymentOf, reportHook } from './codedeploy.ts';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { preTrafficHook, type LifecycleHookEvent, type PreTrafficConfig } from './pre-traffic-hook.ts';
import type { Outcome } from './pre-traffic-check.ts';
import { checkKeysOf } from './check-keys.ts';

/** The hook's configuration, from the environment the construct writes (PRE_TRAFFIC_CONFIG: JSON). */
export function configOf(env: Readonly<Record<string, string | undefined>>): PreTrafficConfig & { secretId: string } {
  const raw = env.PRE_TRAFFIC_CONFIG;
  if (!raw) throw new Error('PRE_TRAFFIC_CONFIG is not set');
  const c = JSON.parse(raw) as Omit<PreTrafficConfig, 'functions'> & {
    functions: [string, string][];
    secretId: string;
  };
  return { ...c, functions: Object.fromEntries(c.functions) };
}

const lambda = new LambdaClient({});
const secrets = new SecretsManagerClient({});

async function invoke(functionName: string, qualifier: string, event: unknown): Promise<Outcome> {
  const r = await lambda.send(
    new InvokeCommand({ FunctionName: functionName, Qualifier: qualifier, Payload: JSON.stringify(event) }),
  );
  const text = r.Payload ? Buffer.from(r.Payload).toString('utf8') : '';
  const payload = text ? (JSON.parse(text) as unknown) : undefined;
  if (r.FunctionError) {
    // Lambda's error payload: `{ errorType, errorMessage }` (a throw, a timeout, a crash).
    const p = payload as { errorType?: string; errorMessage?: string } | undefined;
    return { ok: false, error: Object.assign(new Error(p?.errorMessage ?? r.FunctionError), { name: p?.errorType }) };
  }
  return { ok: true, result: payload };
}

export const handler = async (event: LifecycleHookEvent) => {
  // The one configuration read of this entry: the hook is no API function and has no Runtime (shared/runtime.ts).
  // eslint-disable-next-line no-restricted-properties
  const config = configOf(process.env);
  return preTrafficHook(
    event,
    {
      appSpec: async (deploymentId) => (await deploymentOf(deploymentId)).appSpec,
      invoke,
      report: reportHook,
      async checkKeys() {
        const s = await secrets.send(new GetSecretValueCommand({ SecretId: config.secretId }));
        if (!s.SecretString) throw new Error(`the check keys' secret ${config.secretId} holds no key`);
        return checkKeysOf(s.SecretString);
      },
      log: (line) => console.log(line),
      // The hook's pacing clock: wall time, as the limiter it paces for counts it (no Runtime here, as above).
      // eslint-disable-next-line no-restricted-properties
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    },
    config,
  );
};
