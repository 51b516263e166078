/**
 * Configuration fails the cold start, not a request: a stage without CURSOR_SECRET must not sign cursors with the
 * public development constant. Functions are built from a configuration passed in (no process.env involved).
 */
import { describe, expect, it } from 'vitest';
import { cursorSecret, loadConfig, LOCAL_CURSOR_SECRET } from '../../lambdas/shared/config.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { getPetHandler } from '../../lambdas/handlers/get-pet.ts';
import { listPetsHandler } from '../../lambdas/handlers/list-pets.ts';

const TABLES = { PETS_TABLE_NAME: 'Pets', KEYS_TABLE_NAME: 'Keys', STATE_TABLE_NAME: 'State' };
const runtime = (stage: string, extra: Record<string, string> = {}) =>
  createRuntime(loadConfig({ ...TABLES, STAGE: stage, METRICS: 'off', ...extra }));

describe('CURSOR_SECRET', () => {
  it('is required outside STAGE=local; the public constant is for local only', () => {
    expect(() => cursorSecret({ STAGE: 'staging', CURSOR_SECRET: undefined })).toThrow(/CURSOR_SECRET is required/);
    expect(() => cursorSecret({ STAGE: 'production', CURSOR_SECRET: undefined })).toThrow(/CURSOR_SECRET is required/);
    expect(cursorSecret({ STAGE: 'local', CURSOR_SECRET: undefined })).toBe(LOCAL_CURSOR_SECRET);
    expect(cursorSecret({ STAGE: 'staging', CURSOR_SECRET: 'a-real-secret-0123456789' })).toBe(
      'a-real-secret-0123456789',
    );
  });

  it('fails building listPets in a stage without it, and no other function (only listPets receives it)', () => {
    expect(() => listPetsHandler(runtime('staging'))).toThrow(/CURSOR_SECRET is required outside STAGE=local/);
    expect(getPetHandler(runtime('staging'))).toBeTypeOf('function');
  });

  it('builds listPets in a stage that has it, and locally without it', () => {
    expect(listPetsHandler(runtime('staging', { CURSOR_SECRET: 'a-real-secret-0123456789' }))).toBeTypeOf('function');
    expect(listPetsHandler(runtime('local'))).toBeTypeOf('function');
  });

  it('rejects a short secret, naming the variable', () => {
    expect(() => loadConfig({ ...TABLES, STAGE: 'staging', CURSOR_SECRET: 'short' })).toThrow(
      /Invalid configuration: CURSOR_SECRET/,
    );
  });
});

describe('loadConfig', () => {
  it('names every missing or malformed variable at once', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'LOUD', DYNAMODB_TIMEOUT_MS: '50' })).toThrow(
      /PETS_TABLE_NAME.*KEYS_TABLE_NAME.*STATE_TABLE_NAME.*DYNAMODB_TIMEOUT_MS.*LOG_LEVEL/,
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
