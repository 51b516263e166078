/**
 * The AWS side of the check key's secret (ports.ts CheckKeySecretPort): one secret by name, read and written with
 * the fewest actions the admin's role needs on it: GetSecretValue (to tell whether it holds a working key),
 * DescribeSecret (whether it exists), CreateSecret the first time, PutSecretValue after that.
 */
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
} from '@aws-sdk/client-secrets-manager';
import type { Sender } from './pacing.ts';
import { AdminError, type CheckKeySecretPort } from './ports.ts';

const named = (name: string) => (err: unknown) => (err as Error)?.name === name;
const notFound = named('ResourceNotFoundException');

/**
 * A secret scheduled for deletion takes no new value and cannot be made again under its name until it is gone (up to
 * 30 days): it is restored first, which keeps its name and its grants on the hook's role.
 */
const scheduledForDeletion = (name: string) =>
  new AdminError(
    `the secret ${name} is scheduled for deletion: restore it (aws secretsmanager restore-secret --secret-id ` +
      `${name}), then run \`keys issue-check-key\` again`,
  );

export function awsCheckKeySecrets(client: Sender): CheckKeySecretPort {
  const send = <T>(command: object) => client.send(command) as Promise<T>;
  return {
    async read(name) {
      try {
        const out = await send<{ SecretString?: string }>(new GetSecretValueCommand({ SecretId: name }));
        // The hook trims what it reads; a secret with no string value holds no key.
        return out?.SecretString?.trim() || undefined;
      } catch (err) {
        if (notFound(err)) return undefined;
        if (named('InvalidRequestException')(err) && /delet/i.test((err as Error).message))
          throw scheduledForDeletion(name);
        throw err;
      }
    },
    async write(name, value) {
      const found = await send<{ DeletedDate?: Date }>(new DescribeSecretCommand({ SecretId: name })).catch(
        (err: unknown) => (notFound(err) ? undefined : Promise.reject(err)),
      );
      if (found?.DeletedDate) throw scheduledForDeletion(name);
      if (!found) {
        try {
          await send(
            new CreateSecretCommand({
              Name: name,
              SecretString: value,
              Description: 'The key the pre-traffic check of each deployment calls the API with (keys issue-check-key)',
            }),
          );
          return;
        } catch (err) {
          // Made meanwhile (another run, or a create whose answer was lost): it takes the value as a new version.
          if (!named('ResourceExistsException')(err)) throw err;
        }
      }
      await send(new PutSecretValueCommand({ SecretId: name, SecretString: value }));
    },
  };
}
