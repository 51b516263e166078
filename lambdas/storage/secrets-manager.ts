/**
 * The SecretReader on Secrets Manager: GetSecretValue (the only action a list operation's role is granted, on
 * its one secret), through the SDK's Secrets Manager client. It signs with the credentials the DynamoDB client
 * resolves (the function's role in AWS), so one provider serves both clients. Only the Lambda entry that needs a
 * secret builds this reader, so no other function's bundle carries the client.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBClientResolvedConfig } from '@aws-sdk/client-dynamodb';

/** One version stage of a secret: its SecretString, or undefined when no version carries that stage. */
export type SecretReader = (secretId: string, versionStage: SecretVersionStage) => Promise<string | undefined>;

export type SecretVersionStage = 'AWSCURRENT' | 'AWSPENDING' | 'AWSPREVIOUS';

export interface SecretsManagerSettings {
  readonly region: string;
  /** A DynamoDB client's, resolved: the function's role in AWS. */
  readonly credentials: DynamoDBClientResolvedConfig['credentials'];
  /** Replaces the region's Secrets Manager endpoint (tests: a local server answering as the service does). */
  readonly endpoint?: string;
}

/** Bounded, since the first read holds up a cold start: 3 attempts of the SDK's standard retries, 1 s to connect. */
const ATTEMPTS = 3;
const CONNECT_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;

/** The reader of a list operation's function: the DynamoDB client's resolved config gives the credentials. */
export function secretsManagerReader(settings: SecretsManagerSettings): SecretReader {
  const client = new SecretsManagerClient({
    region: settings.region,
    credentials: settings.credentials,
    maxAttempts: ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
  });
  return async (secretId, versionStage) => {
    try {
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: versionStage }));
      return out.SecretString;
    } catch (err) {
      // No version carries that stage (AWSPENDING outside a rotation, AWSPREVIOUS before the first one).
      if ((err as Error)?.name === 'ResourceNotFoundException') return undefined;
      throw err;
    }
  };
}
