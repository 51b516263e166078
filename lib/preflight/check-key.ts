/**
 * Preflight's check that the pre-traffic hook's key exists before a deploy that runs the hook: without the secret
 * `animal-store/<stage>/pre-traffic-check-key` every check fails, and with it every deployment of the stage (the
 * hook reports Failed and CodeDeploy rolls the version back). A new stack runs no CodeDeploy deployment on its create,
 * so the key is needed from the first update on, and the admin tool can issue it once the stack exists. Reads only
 * (Secrets Manager DescribeSecret: the value is never read); without AWS credentials it is skipped with a note.
 */
import { checkKeySecretName } from '../constructs/pre-traffic-hook.ts';
import type { PreflightCheck } from './checks.ts';
import { awsReadFailure } from './read-failure.ts';

/** Whether the secret exists (true), is missing (false), or why it could not be read (a finding). */
export type CheckKeySource = (
  secretName: string,
) => Promise<boolean | { readonly skip: string } | { readonly finding: string }>;

/** The IAM action the check's read needs. */
export const CHECK_KEY_READ_ACTIONS = 'secretsmanager:DescribeSecret on the check key';

/**
 * The command that issues the check's key on a stage and stores it in its secret (docs/deployment.md, "The
 * pre-traffic check"; lib/admin/check-key.ts): run again, it finishes whatever a run before left.
 */
export const issueCheckKeyCommands = (stage: string): string =>
  `npm run admin -- keys issue-check-key --stage ${stage}`;

export const awsCheckKey: CheckKeySource = async (secretName) => {
  const { machineCredentialsProblem } = await import('./deployed.ts');
  const why = await machineCredentialsProblem();
  if (why) return { skip: why };
  const { SecretsManagerClient, DescribeSecretCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  try {
    await client.send(new DescribeSecretCommand({ SecretId: secretName }));
    return true;
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
      return found
        ? []
        : [
            `pre-traffic check key: the secret ${name} does not exist, so the hook fails every check and CodeDeploy ` +
              `rolls back every deployment of ${input.stage}: issue it first: ${issueCheckKeyCommands(input.stage)}`,
          ];
    },
  };
}
