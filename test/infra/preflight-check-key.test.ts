/**
 * Preflight's pre-traffic check key check (lib/preflight/check-key.ts) on the synthesized staging template, with a
 * stand-in for Secrets Manager's DescribeSecret: an existing stack whose check key's secret is missing would roll
 * back every deployment (the hook fails every check), so preflight names the one command that issues it; a create (no
 * CodeDeploy deployment runs) and a machine without credentials are not findings.
 */
import { beforeAll, expect, it } from 'vitest';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import { checkKeyCheck } from '../../lib/preflight/check-key.ts';
import type { PreflightInput } from '../../lib/preflight/checks.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { localAssembly } from '../../lib/local/synth.ts';

let template: CfnTemplate;
beforeAll(async () => {
  template = (await localAssembly()).template as CfnTemplate;
}, 240_000);

const notes: string[] = [];
const input = (state: 'absent' | 'present', t: CfnTemplate = template) =>
  ({
    stage: 'staging',
    name: 'staging',
    template: t,
    deployed: async () => (state === 'absent' ? { state } : { state, status: 'UPDATE_COMPLETE' }),
    note: (l: string) => notes.push(l),
  }) as unknown as PreflightInput;

it('names the command that issues the key when an existing stage lacks it', async () => {
  const asked: string[] = [];
  const missing = checkKeyCheck(async (name) => (asked.push(name), false));
  expect(await missing.run(input('present'))).toEqual([
    expect.stringMatching(
      /^pre-traffic check key: the secret animal-store\/staging\/pre-traffic-check-key does not exist, .*rolls back every deployment of staging: issue it first: npm run admin -- keys issue-check-key --stage staging$/,
    ),
  ]);
  expect(asked).toEqual([checkKeySecretName('staging')]);
  expect(await checkKeyCheck(async () => true).run(input('present'))).toEqual([]);
});

it('asks nothing for a create (no deployment runs the hook), a template without the hook, or the account stack', async () => {
  const never = checkKeyCheck(async () => {
    throw new Error('not asked');
  });
  expect(await never.run(input('absent'))).toEqual([]);
  expect(await never.run(input('present', { Resources: {} }))).toEqual([]);
  expect(await never.run({ ...input('present'), name: 'account' } as PreflightInput)).toEqual([]);
});

it('skips with a note without credentials, and passes a refused read on as its finding', async () => {
  expect(await checkKeyCheck(async () => ({ skip: 'no AWS credentials' })).run(input('present'))).toEqual([]);
  expect(notes).toContain('pre-traffic check key: no AWS credentials: skipped');
  expect(await checkKeyCheck(async () => ({ finding: 'denied' })).run(input('present'))).toEqual(['denied']);
});
