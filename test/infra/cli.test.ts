/**
 * The real CLI, as CI runs it: `npx cdk synth --quiet` for both stages and the account settings stack with no AWS
 * credentials (offline, local esbuild bundling), production's required context on the command line, cdk-nag
 * AwsSolutions checks on, and no unacknowledged finding.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { ACCOUNT_SETTINGS_STACK } from '../../lib/stacks/account-settings-stack.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';

const run = promisify(execFile);
const outdir = mkdtempSync(join(tmpdir(), 'animal-store-cdk-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

it('synthesizes both stages offline with no unacknowledged cdk-nag findings', async () => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE)$/.test(k),
    ),
  );
  const stacks = [...STAGE_NAMES.map((n) => STAGES[n].stackName), ACCOUNT_SETTINGS_STACK];
  const context = Object.entries(PRODUCTION_CONTEXT).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const result = await run('npx', ['cdk', 'synth', '--quiet', '--output', outdir, ...context, ...stacks], {
    cwd: new URL('../../', import.meta.url).pathname,
    env,
    maxBuffer: 32 * 1024 * 1024,
  }).catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ ...err, failed: true }));
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  expect('failed' in result ? output : '').toBe('');
  expect(output).not.toMatch(/AwsSolutions-/);
  // The one expected warning: staging's alarm topic has no subscriber (production would refuse to synthesize).
  expect([...output.matchAll(/Acknowledge with '([^']+)'/g)].map((m) => m[1])).toEqual([
    'Annotation::animal-store:alarmSubscriber',
  ]);
  for (const name of stacks) {
    const template = JSON.parse(readFileSync(join(outdir, `${name}.template.json`), 'utf8'));
    expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
  }
}, 300_000);
