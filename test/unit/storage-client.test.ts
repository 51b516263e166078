/**
 * The two DynamoDB clients of a function (lambdas/storage/client.ts): the counting one never resends, and it is
 * built on the first one's connection, credentials and signer, so a cold start resolves each once.
 */
import { describe, expect, it } from 'vitest';
import { createStorage, tableNamesIn } from '../../lambdas/storage/client.ts';

const storage = () =>
  createStorage({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', timeoutMs: 1_000, tables: tableNamesIn({}) });

describe('storage clients', () => {
  it('resends on the ordinary client and never on the counting one', async () => {
    const s = storage();
    expect(await s.ddb.config.maxAttempts()).toBe(3);
    expect(await s.once.ddb.config.maxAttempts()).toBe(1);
  });

  it('shares the connection, the credentials and the signer', async () => {
    const s = storage();
    expect(s.once.ddb.config.requestHandler).toBe(s.ddb.config.requestHandler);
    expect(s.once.ddb.config.credentials).toBe(s.ddb.config.credentials);
    expect(await s.once.ddb.config.signer()).toBe(await s.ddb.config.signer());
    expect(await s.ddb.config.signer()).toBe(await s.ddb.config.signer());
    expect(await s.once.ddb.config.credentials()).toMatchObject({ accessKeyId: 'local', secretAccessKey: 'local' });
  });
});
