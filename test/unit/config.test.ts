/**
 * Configuration fails the cold start, not a request: a stage without CURSOR_SECRET must not sign cursors with the
 * public development constant.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

process.env.PETS_TABLE_NAME ??= 'unit-Pets';
process.env.KEYS_TABLE_NAME ??= 'unit-ApiKeys';
process.env.STATE_TABLE_NAME ??= 'unit-State';
const { cursorSecret, LOCAL_CURSOR_SECRET } = await import('../../lambdas/shared/config.ts');

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
  vi.resetModules();
});

function lambdaEnv(stage: string, extra: Record<string, string> = {}) {
  process.env = {
    ...saved,
    PETS_TABLE_NAME: 'Pets',
    KEYS_TABLE_NAME: 'Keys',
    STATE_TABLE_NAME: 'State',
    STAGE: stage,
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...extra,
  };
  delete process.env.CURSOR_SECRET;
  Object.assign(process.env, extra);
}

describe('CURSOR_SECRET', () => {
  it('is required outside STAGE=local; the public constant is for local only', () => {
    expect(() => cursorSecret({ STAGE: 'staging', CURSOR_SECRET: undefined })).toThrow(/CURSOR_SECRET is required/);
    expect(() => cursorSecret({ STAGE: 'production', CURSOR_SECRET: undefined })).toThrow(/CURSOR_SECRET is required/);
    expect(cursorSecret({ STAGE: 'local', CURSOR_SECRET: undefined })).toBe(LOCAL_CURSOR_SECRET);
    expect(cursorSecret({ STAGE: 'staging', CURSOR_SECRET: 'a-real-secret-0123456789' })).toBe(
      'a-real-secret-0123456789',
    );
  });

  it('fails the listPets cold start in a stage without it, and no other function (only listPets receives it)', async () => {
    lambdaEnv('staging');
    vi.resetModules();
    await expect(import('../../lambdas/handlers/list-pets.ts')).rejects.toThrow(
      /CURSOR_SECRET is required outside STAGE=local/,
    );
    vi.resetModules();
    await expect(import('../../lambdas/handlers/get-pet.ts')).resolves.toHaveProperty('handler');
  });

  it('starts listPets in a stage that has it, and locally without it', async () => {
    lambdaEnv('staging', { CURSOR_SECRET: 'a-real-secret-0123456789' });
    await expect(import('../../lambdas/handlers/list-pets.ts')).resolves.toHaveProperty('handler');
    vi.resetModules();
    lambdaEnv('local');
    await expect(import('../../lambdas/handlers/list-pets.ts')).resolves.toHaveProperty('handler');
  });

  it('rejects a short secret at load', async () => {
    lambdaEnv('staging', { CURSOR_SECRET: 'short' });
    await expect(import('../../lambdas/shared/config.ts')).rejects.toThrow(/Invalid configuration: CURSOR_SECRET/);
  });
});
