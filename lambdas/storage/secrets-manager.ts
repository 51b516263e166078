/**
 * The SecretReader on Secrets Manager (GetSecretValue, the only action listPets' role is granted, on its one
 * secret). Only the Lambda entry that needs a secret builds it, so no other bundle carries this client.
 */
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { SecretReader } from '../shared/cursor-keys.ts';

export function secretsManagerReader(region: string): SecretReader {
  // Bounded like the DynamoDB client: a refresh runs inside a request (every few minutes), which must not hang on it.
  const client = new SecretsManagerClient({
    region,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000, throwOnRequestTimeout: true },
  });
  return async (secretId, versionStage) => {
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: versionStage }));
      return out.SecretString;
    } catch (error) {
      // No version carries that stage (AWSPENDING outside a rotation, AWSPREVIOUS before the first one).
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };
}
