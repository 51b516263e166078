/**
 * Preflight's pre-traffic check key check (lib/preflight/check-key.ts) on the synthesized staging template: an
 * existing stack whose check keys' secret is missing, or lacks a plan's key (the old form's one key, a plan left out),
 * would roll back deployments (the hook cannot judge them), so preflight names the plans and the one command that
 * issues them; a create (no CodeDeploy deployment runs) and a machine without credentials are not findings. Against
 * moto's Secrets Manager where moto_server is installed, with a stand-in for the cases moto cannot make.
 */
import { CreateSecretCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_NAMES } from '../../contract/plans.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { formatCheckKeys } from '../../lambdas/hooks/check-keys.ts';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import { checkKeyCheck } from '../../lib/preflight/check-key.ts';
import type { PreflightInput } from '../../lib/preflight/checks.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { MOTO_INSTALL, motoEnv, motoServerPath, startMoto, useEnv, type Moto } from '../helpers/moto.ts';

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

/** A key of every plan, as the admin tool stores them. */
const every = () => Object.fromEntries(PLAN_NAMES.map((p) => [p, generateKey()]));
const FIX = 'issue them first: npm run admin -- keys issue-check-key --stage staging';

it('names the command that issues the key when an existing stage lacks it', async () => {
  const asked: string[] = [];
  const missing = checkKeyCheck(async (name) => (asked.push(name), false));
  expect(await missing.run(input('present'))).toEqual([
    expect.stringMatching(
      /^pre-traffic check key: the secret animal-store\/staging\/pre-traffic-check-key does not exist, .*rolls back every deployment of staging: issue it first: npm run admin -- keys issue-check-key --stage staging$/,
    ),
  ]);
  expect(asked).toEqual([checkKeySecretName('staging')]);
  expect(await checkKeyCheck(async () => formatCheckKeys(every())).run(input('present'))).toEqual([]);
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

const MOTO = motoServerPath();
const SKIPPED = `moto_server is not installed, so preflight's read of the check keys is not run against moto: ${MOTO_INSTALL}`;
if (!MOTO) console.warn(SKIPPED);

describe.skipIf(!MOTO)(MOTO ? "against moto's Secrets Manager" : `against moto (skipped: ${SKIPPED})`, () => {
  let moto: Moto;
  let client: SecretsManagerClient;
  let restoreEnv: () => void;
  beforeAll(async () => {
    moto = await startMoto();
    client = new SecretsManagerClient(moto.config);
    // Preflight's own client, as on a deployer's machine: the SDK's environment, pointed at moto.
    restoreEnv = useEnv(motoEnv(moto));
  }, 240_000);
  afterAll(async () => {
    restoreEnv?.();
    client?.destroy();
    await moto?.stop();
  });

  const SECRET = checkKeySecretName('staging');
  const put = async (value: string) => {
    await client
      .send(new CreateSecretCommand({ Name: SECRET, SecretString: value }))
      .catch(() => client.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: value })));
  };
  const findings = () => checkKeyCheck().run(input('present'));

  it("refuses a stage whose secret lacks a plan's key, naming the plans and the command; passes one with all", async () => {
    expect(await findings()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^pre-traffic check key: the secret ${SECRET} does not exist, .*: issue it first: npm run admin -- keys issue-check-key --stage staging$`,
        ),
      ),
    ]);

    // The form before a key per plan: one bare key.
    const old = generateKey();
    await put(old);
    const [oldForm] = await findings();
    expect(oldForm).toContain(
      `the secret ${SECRET} has no key of plan free, pro, business, enterprise (it holds one key: the form before a key per plan)`,
    );
    expect(oldForm).toContain(FIX);
    expect(oldForm).not.toContain(old);

    // Enterprise left out (as a release before Enterprise's check key wrote it, or by hand).
    const { enterprise: _e, ...withoutEnterprise } = every();
    await put(formatCheckKeys(withoutEnterprise));
    const [lacking] = await findings();
    expect(lacking).toMatch(
      new RegExp(
        `the secret ${SECRET} has no key of plan enterprise, so the hook cannot judge the authorizer for that plan`,
      ),
    );
    expect(lacking!.endsWith(FIX)).toBe(true);

    // Not either form: said by its shape, never by its value.
    await put('{"pro": "not a key"}');
    const [garbage] = await findings();
    expect(garbage).toMatch(/^pre-traffic check key: the check keys' secret is not a JSON object of plan name to key/);
    expect(garbage).not.toContain('not a key');
    expect(garbage).toContain('issue them again: npm run admin -- keys issue-check-key --stage staging');

    await put(formatCheckKeys(every()));
    expect(await findings()).toEqual([]);
  });
});
