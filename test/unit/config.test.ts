/**
 * Configuration fails the cold start, not a request: in a stage listPets reads its cursor secret from Secrets Manager
 * (CURSOR_SECRET_ARN) and never signs with the public development constant or a plain value in its configuration.
 * Functions are built from a configuration passed in (no process.env involved).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, LOCAL_CURSOR_SECRET } from '../../lambdas/shared/config.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { localTableEnv } from '../../lambdas/storage/provision.ts';
import { PETS_TABLE, STATE_TABLE } from '../../contract/tables.ts';
import { cursorKeySource, type SecretReader } from '../../lambdas/shared/cursor-keys.ts';
import { getPetHandler } from '../../lambdas/handlers/get-pet.ts';
import { listPetsHandler } from '../../lambdas/handlers/list-pets.ts';

const TABLES = localTableEnv('config');
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:CursorSecret-AbCdEf';
const VALUE = 'a-real-secret-0123456789';
const reads: string[] = [];
const readSecret = (): SecretReader => async (id, stage) => {
  reads.push(`${id} ${stage}`);
  return stage === 'AWSCURRENT' ? VALUE : undefined;
};
const runtime = (stage: string, extra: Record<string, string> = {}, withReader = true) =>
  createRuntime(
    loadConfig({ ...TABLES, STAGE: stage, METRICS: 'off', ...extra }),
    withReader ? { readSecret, cursorKeys: cursorKeySource } : { cursorKeys: cursorKeySource },
  );

describe('the cursor secret', () => {
  it('fails building listPets in a stage without CURSOR_SECRET_ARN, and no other function (only listPets receives it)', () => {
    expect(() => listPetsHandler(runtime('staging'))).toThrow(/listPets needs the cursor secret, CURSOR_SECRET_ARN/);
    expect(() => listPetsHandler(runtime('production'))).toThrow(/CURSOR_SECRET_ARN/);
    expect(getPetHandler(runtime('staging'))).toBeTypeOf('function');
  });

  it('in a stage, is read from the secret the ARN names, unless a value is given directly (tests)', async () => {
    const rt = runtime('staging', { CURSOR_SECRET_ARN: ARN });
    expect(listPetsHandler(rt)).toBeTypeOf('function');
    await expect(rt.cursorKeys!()).resolves.toEqual({ current: VALUE, accepted: [] });
    expect(reads).toContain(`${ARN} AWSCURRENT`);
    reads.length = 0;
    const direct = runtime('staging', { CURSOR_SECRET_ARN: ARN, CURSOR_SECRET: 'given-directly-0123456789' });
    await expect(direct.cursorKeys!()).resolves.toEqual({ current: 'given-directly-0123456789' });
    expect(reads).toEqual([]);
  });

  it('locally, is CURSOR_SECRET or the public development constant, without Secrets Manager', async () => {
    reads.length = 0;
    const local = runtime('local', { CURSOR_SECRET_ARN: 'local-secret-CursorSecret0000' });
    expect(listPetsHandler(local)).toBeTypeOf('function');
    await expect(local.cursorKeys!()).resolves.toEqual({ current: LOCAL_CURSOR_SECRET });
    await expect(runtime('local', { CURSOR_SECRET: VALUE }, false).cursorKeys!()).resolves.toEqual({ current: VALUE });
    expect(reads).toEqual([]);
  });

  it('rejects a short secret given directly, naming the variable', () => {
    expect(() => loadConfig({ ...TABLES, STAGE: 'local', CURSOR_SECRET: 'short' })).toThrow(
      /Invalid configuration: CURSOR_SECRET/,
    );
  });
});

describe('loadConfig', () => {
  it('names every malformed variable at once', () => {
    expect(() => loadConfig({ [PETS_TABLE.envVar]: '', LOG_LEVEL: 'LOUD', DYNAMODB_TIMEOUT_MS: '50' })).toThrow(
      new RegExp(`${PETS_TABLE.envVar}.*DYNAMODB_TIMEOUT_MS.*LOG_LEVEL`),
    );
  });

  // A function's environment holds only the tables its access names: a store used without its grant says so.
  it('holds only the tables given, and names the variable of one used without it', () => {
    const { storage } = createRuntime(loadConfig({ [STATE_TABLE.envVar]: 'State', METRICS: 'off' }));
    expect(storage.tables.state).toBe('State');
    expect(() => storage.tables.pets).toThrow(
      `${PETS_TABLE.envVar} is not set: the function's access does not name table ${PETS_TABLE.id}`,
    );
  });

  it("reads Powertools' log sampling rate as a share from 0 to 1, and refuses another value by name", () => {
    expect(loadConfig({ ...TABLES, POWERTOOLS_LOGGER_SAMPLE_RATE: '0.05' }).POWERTOOLS_LOGGER_SAMPLE_RATE).toBe(0.05);
    expect(loadConfig(TABLES).POWERTOOLS_LOGGER_SAMPLE_RATE).toBeUndefined();
    expect(() => loadConfig({ ...TABLES, POWERTOOLS_LOGGER_SAMPLE_RATE: '5' })).toThrow(
      /POWERTOOLS_LOGGER_SAMPLE_RATE/,
    );
  });

  it('reads nothing from the process environment', () => {
    process.env.STAGE = 'production';
    try {
      expect(loadConfig(TABLES).STAGE).toBe('local');
    } finally {
      delete process.env.STAGE;
    }
  });
});
