/**
 * The Secrets Manager adapter listPets reads its cursor secret through (on aws-sdk-client-mock: no local engine
 * exists for Secrets Manager): one GetSecretValue per version stage, and a stage no version carries is absent, not
 * an error (AWSPENDING outside a rotation, AWSPREVIOUS before the first).
 */
import { mockClient } from 'aws-sdk-client-mock';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { afterAll, describe, expect, it } from 'vitest';
import { secretCursorKeys } from '../../lambdas/shared/cursor-keys.ts';
import { secretsManagerReader } from '../../lambdas/storage/secrets-manager.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorSecret-AbCdEf';
const sm = mockClient(SecretsManagerClient);
afterAll(() => sm.restore());

describe('secretsManagerReader', () => {
  it('reads each version stage of the secret the ARN names; a missing stage is undefined', async () => {
    sm.reset();
    const notFound = new ResourceNotFoundException({ message: 'no version with stage AWSPENDING', $metadata: {} });
    sm.on(GetSecretValueCommand, { SecretId: ARN, VersionStage: 'AWSCURRENT' }).resolves({
      SecretString: 'c'.repeat(64),
    });
    sm.on(GetSecretValueCommand, { SecretId: ARN, VersionStage: 'AWSPREVIOUS' }).resolves({
      SecretString: 'p'.repeat(64),
    });
    sm.on(GetSecretValueCommand, { SecretId: ARN, VersionStage: 'AWSPENDING' }).rejects(notFound);
    const keys = await secretCursorKeys(ARN, secretsManagerReader('eu-west-1'), () => 0)();
    expect(keys).toEqual({ current: 'c'.repeat(64), accepted: ['p'.repeat(64)] });
    expect(
      sm
        .commandCalls(GetSecretValueCommand)
        .map((c) => c.args[0].input.VersionStage)
        .sort(),
    ).toEqual(['AWSCURRENT', 'AWSPENDING', 'AWSPREVIOUS']);
  });

  it('lets any other failure through (no grant, throttling): the cold start fails rather than signing with nothing', async () => {
    sm.reset();
    sm.on(GetSecretValueCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    await expect(secretCursorKeys(ARN, secretsManagerReader('eu-west-1'), () => 0)()).rejects.toThrow(/not authorized/);
  });
});
