/**
 * Preflight's check that the pre-traffic hook has its keys before a deploy that runs the hook: the secret
 * `animal-store/<stage>/pre-traffic-check-key` must hold a key of every plan the stage sells
 * (lambdas/hooks/check-keys.ts), or the hook cannot judge the authorizer for the plans it lacks and fails every
 * deployment of the stage (CodeDeploy rolls the version back). A new stack runs no CodeDeploy deployment on its
 * create, so the keys are needed from the first update on, and the admin tool can issue them once the stack exists.
 * Reads only (Secrets Manager GetSecretValue: the value is parsed to name the plans it lacks, never printed); without
 * AWS credentials it is skipped with a note.
 */
import { checkKeysOf, issueCheckKeysCommand } from '../../lambdas/hooks/check-keys.ts';
import { checkKeySecretName } from '../constructs/pre-traffic-hook.ts';
import type { PreflightCheck } from './checks.ts';
import { awsReadFailure } from './read-failure.ts';

/** The secret's value, false when there is no such secret, or why it could not be read (a finding). */
export type CheckKeySource = (
  secretName: string,
) => Promise<string | false | { readonly skip: string } | { readonly finding: string }>;

/** The IAM action the check's read needs. */
export const CHECK_KEY_READ_ACTIONS = 'secretsmanager:GetSecretValue on the check key';

/**
 * The command that issues every plan's check key on a stage and stores them in its secret (docs/deployment.md, "The
 * pre-traffic check"; lib/admin/check-key.ts): run again, it finishes whatever a run before left.
 */
export const issueCheckKeyCommands = issueCheckKeysCommand;

export const awsCheckKey: CheckKeySource = async (secretName) => {
  const { machineCredentialsProblem } = await import('./deployed.ts');
  const why = await machineCredentialsProblem();
  if (why) return { skip: why };
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  try {
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretName }));
    return out.SecretString ?? '';
  } catch (err) {
    if ((err as Error)?.name === 'ResourceNotFoundException') return false;
    return {
      finding: awsReadFailure('pre-traffic check key', `the secret ${secretName}`, CHECK_KEY_READ_ACTIONS, err),
    };
  } finally {
    client.destroy();
  }
};

/** The check; `source` is a stand-in in tests. Only a stage whose template has the hook, and whose stack exists. */
export function checkKeyCheck(source: CheckKeySource = awsCheckKey): PreflightCheck {
  return {
    name: 'pre-traffic check key',
    run: async (input) => {
      if (input.name !== input.stage) return [];
      // The hook is named on each live alias's update policy (CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook).
      const hooked = Object.values(input.template.Resources).some((r) =>
        JSON.stringify(r.UpdatePolicy ?? {}).includes('BeforeAllowTrafficHook'),
      );
      if (!hooked) return [];
      // A create runs no CodeDeploy deployment, so no hook: the key is needed from the first update on.
      if ((await input.deployed()).state === 'absent') return [];
      const name = checkKeySecretName(input.stage);
      const found = await source(name);
      if (typeof found === 'object' && 'skip' in found) {
        input.note(`pre-traffic check key: ${found.skip}: skipped`);
        return [];
      }
      if (typeof found === 'object') return [found.finding];
      const fails = `the hook fails every check and CodeDeploy rolls back every deployment of ${input.stage}`;
      const fix = issueCheckKeyCommands(input.stage);
      if (found === false)
        return [`pre-traffic check key: the secret ${name} does not exist, so ${fails}: issue it first: ${fix}`];
      let keys: ReturnType<typeof checkKeysOf>;
      try {
        keys = checkKeysOf(found);
      } catch (err) {
        // The parser's message names the expected shape, never the value.
        return [`pre-traffic check key: ${(err as Error).message}, so ${fails}: issue them again: ${fix}`];
      }
      const { missing, single } = keys;
      if (missing.length === 0) return [];
      const them = missing.length === 1 ? 'that plan' : 'those plans';
      return [
        `pre-traffic check key: the secret ${name} has no key of plan ${missing.join(', ')}` +
          `${single !== undefined ? ' (it holds one key: the form before a key per plan)' : ''}, so the hook cannot judge the ` +
          `authorizer for ${them}${missing.includes('business') ? ', nor any operation (they send the Business key)' : ''} ` +
          `and reports Failed: CodeDeploy would roll back such deployments of ${input.stage}: issue them first: ${fix}`,
      ];
    },
  };
}
