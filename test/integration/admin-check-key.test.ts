/**
 * `keys issue-check-key --stage <stage>`: one command issues the pre-traffic check's key and stores its secret where
 * the hook reads it. Over the CLI, on DynamoDB Local and the local API (the secret stored is a key its authorizer
 * lets through), with Secrets Manager in memory; where moto_server is installed, also its port on moto's Secrets
 * Manager, and the whole `--stage` path (the stack deployed to moto, found by its outputs). Rerun, it says there
 * is nothing to do; stopped at any step (the secret's write failing, the process dying after the create or in it),
 * the command its failure names finishes it with one active check key whose stored secret works.
 */
import { SecretsManagerClient, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { realDeps, runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps, CheckKeySecretPort } from '../../lib/admin/ports.ts';
import { awsCheckKeySecrets } from '../../lib/admin/secrets.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { deployStage, MOTO_INSTALL, motoEnv, motoServerPath, startMoto, useEnv, type Moto } from '../helpers/moto.ts';

const SECRET = checkKeySecretName('staging');

/** Secrets Manager in memory; `failWrites` writes throw (throttled), as AWS's would. */
class MemorySecrets implements CheckKeySecretPort {
  readonly values = new Map<string, string>();
  failWrites = 0;
  async read(name: string) {
    return this.values.get(name);
  }
  async write(name: string, value: string) {
    if (this.failWrites > 0) {
      this.failWrites--;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
    this.values.set(name, value);
  }
}

let api: TestApi;
let deps: AdminDeps;
// Every case on fresh tables: the check key is one per stage's tables, found by its owner.
beforeEach(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterEach(() => api?.close());

/** Runs the admin tool on `on` until it exits, or until `dead` settles (the process killed: nothing more runs). */
async function run(on: AdminDeps, args: string[], dead: Promise<unknown> = new Promise(() => {})) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await Promise.race([
    runAdmin(args, { out: (l) => out.push(l), err: (l) => err.push(l) }, async () => on),
    dead.then(() => 'killed' as const),
  ]);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const issue = (secrets: CheckKeySecretPort, extra: string[] = [], on: Partial<AdminDeps> = {}, dead?: Promise<void>) =>
  run({ ...deps, secrets, ...on }, ['keys', 'issue-check-key', '--stage', 'staging', ...extra], dead);

const status = async (key: string) => (await api.call('/pets?limit=1', { key, contract: false })).status;

/** The active keys of the check's owner, as `keys list` shows them. */
async function checkKeys() {
  const r = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'pre-traffic-check', '--status', 'active', '--json');
  expect(r.code, r.err).toBe(0);
  return (JSON.parse(r.out) as { keys: Array<{ keyId: string; plan: string; undelivered?: boolean }> }).keys;
}

/** Exactly one active check key, on Business, and the secret stored is one the API lets through. */
async function oneWorkingCheckKey(secrets: { read(name: string): Promise<string | undefined> }) {
  const keys = await checkKeys();
  expect(keys).toHaveLength(1);
  expect(keys[0]).toMatchObject({ plan: 'business' });
  expect(keys[0]!.undelivered).toBeFalsy();
  const stored = await secrets.read(SECRET);
  expect(stored).toMatch(/^ask2?_/);
  expect(await status(stored!)).toBe(200);
  return { keyId: keys[0]!.keyId, stored: stored! };
}

/** The command a failure names (its `error:` line), as it would be pasted. */
const named = (err: string) => /run `(keys [^`]+)`/.exec(err)?.[1];

describe('keys issue-check-key', () => {
  it('creates the key and stores its secret without printing it; run again, there is nothing to do', async () => {
    const secrets = new MemorySecrets();
    const first = await issue(secrets);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain(`Its secret is stored in the secret ${SECRET}`);
    const { keyId, stored } = await oneWorkingCheckKey(secrets);
    expect(first.out).not.toContain(stored);
    expect(first.out).toContain('--show prints it');

    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain(`${keyId} is the check key and the secret ${SECRET} holds its secret: nothing to do`);
    expect(await oneWorkingCheckKey(secrets)).toEqual({ keyId, stored });

    // --show prints the secret the hook reads; --json says what was done.
    const shown = await issue(secrets, ['--show', '--json']);
    expect(shown.code, shown.err).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ did: 'nothing', keyId, key: stored, secretName: SECRET });

    // An admin change like any other: the key's history has its create, by the tool's user.
    const history = await runLocalAdmin(deps, 'keys', 'history', keyId);
    expect(history.out).toMatch(/create --plan business {2}by local:/);
  });

  it('a secret write that fails names the command that finishes it: the same key, a new secret, stored', async () => {
    const secrets = new MemorySecrets();
    secrets.failWrites = 1;
    const failed = await issue(secrets);
    expect(failed.code).toBe(1);
    expect(failed.err).toContain('its secret did not reach the secret');
    expect(failed.err).toContain('ThrottlingException');
    expect(named(failed.err)).toBe('keys issue-check-key');
    expect(secrets.values.size).toBe(0);
    const [made] = await checkKeys();

    const finished = await issue(secrets);
    expect(finished.code, finished.err).toBe(0);
    expect(finished.out).toContain(`Gave ${made!.keyId} a new secret`);
    expect((await oneWorkingCheckKey(secrets)).keyId).toBe(made!.keyId);
    const history = await runLocalAdmin(deps, 'keys', 'history', made!.keyId);
    expect(history.out).toMatch(/create --plan business[^\n]*\n[^\n]*rotate {2}by/);
  });

  it('the process dying after the create (the secret never written) is finished by the command run again', async () => {
    const secrets = new MemorySecrets();
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    // The write never answers: the process is gone before it is sent.
    const dying: CheckKeySecretPort = { read: (n) => secrets.read(n), write: () => (died(), new Promise(() => {})) };
    expect((await issue(dying, [], {}, dead)).code).toBe('killed');
    const [made] = await checkKeys();
    expect(made).toBeDefined();

    const finished = await issue(secrets);
    expect(finished.code, finished.err).toBe(0);
    expect((await oneWorkingCheckKey(secrets)).keyId).toBe(made!.keyId);
  });

  it('the process dying inside the create (before its secret works) is finished under the same key id', async () => {
    const secrets = new MemorySecrets();
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    // The create's activation (the write that makes its secret work) is never sent.
    const store = { ...deps.store, replaceHash: () => (died(), new Promise<void>(() => {})) };
    expect((await issue(secrets, [], { store }, dead)).code).toBe('killed');
    const [left] = await checkKeys();
    expect(left?.undelivered).toBe(true);

    const finished = await issue(secrets);
    expect(finished.code, finished.err).toBe(0);
    expect((await oneWorkingCheckKey(secrets)).keyId).toBe(left!.keyId);
  });

  it('a secret that holds another key (pasted by hand) gets a new secret of the check key', async () => {
    const secrets = new MemorySecrets();
    expect((await issue(secrets)).code).toBe(0);
    const { keyId, stored } = await oneWorkingCheckKey(secrets);
    secrets.values.set(SECRET, 'ask2_not-the-check-keys-secret-at-all');
    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    const now = await oneWorkingCheckKey(secrets);
    expect(now.keyId).toBe(keyId);
    // The secret it replaced was nobody's: no overlap, refused from now on.
    expect(await status(stored)).toBe(401);
  });

  /** A check key an admin made by hand with `keys create`, on `plan`. */
  const madeByHand = async (plan: string) =>
    JSON.parse(
      (await runLocalAdmin(deps, 'keys', 'create', '--owner', 'pre-traffic-check', '--plan', plan, '--json')).out,
    ) as { key: string; keyId: string };

  it('a check key made by hand on Free (too slow for the check) is moved to Business, keeping its stored secret', async () => {
    const { key, keyId } = await madeByHand('free');
    const secrets = new MemorySecrets();
    secrets.values.set(SECRET, key);
    const r = await issue(secrets);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Moved ${keyId} from Free to Business`);
    expect(r.out).toContain('nothing else to do');
    expect(await oneWorkingCheckKey(secrets)).toEqual({ keyId, stored: key });
    expect((await issue(secrets)).out).toMatch(/holds its secret: nothing to do/);
  });

  it('a revoked check key is replaced by a new one; two active check keys are refused, naming the one to revoke', async () => {
    const secrets = new MemorySecrets();
    expect((await issue(secrets)).code).toBe(0);
    const { keyId: revoked, stored: old } = await oneWorkingCheckKey(secrets);
    expect((await runLocalAdmin(deps, 'keys', 'revoke', revoked)).code).toBe(0);
    expect((await issue(secrets)).out).toContain('Created');
    const { keyId: kept } = await oneWorkingCheckKey(secrets);
    expect(kept).not.toBe(revoked);
    expect(await status(old)).toBe(401);

    // A second one made by hand: the command does not choose for the admin which secret the hook keeps using.
    const { keyId: second } = await madeByHand('pro');
    const refused = await issue(secrets);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`keep ${kept} (its secret is stored)`);
    expect(named(refused.err)).toBe(`keys revoke ${second}`);
    expect((await runLocalAdmin(deps, 'keys', 'revoke', second)).code).toBe(0);
    expect((await issue(secrets)).out).toContain('nothing to do');
  });

  it('--local is refused with what to do instead, before anything is connected', async () => {
    const r = await run(deps, ['keys', 'issue-check-key', '--local']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('--local has none of (the local pre-traffic check is given its key by its tests)');
    expect(await checkKeys()).toEqual([]);
  });
});

const MOTO = motoServerPath();
const SKIPPED = `moto_server is not installed, so the admin tool's stage path is not run against moto: ${MOTO_INSTALL}`;
if (!MOTO) console.warn(SKIPPED);

describe.skipIf(!MOTO)(MOTO ? "against moto's Secrets Manager" : `against moto (skipped: ${SKIPPED})`, () => {
  let moto: Moto;
  let client: SecretsManagerClient;
  beforeAll(async () => {
    moto = await startMoto();
    client = new SecretsManagerClient(moto.config);
  }, 240_000);
  afterAll(async () => {
    client?.destroy();
    await moto?.stop();
  });

  it('creates the secret, then replaces a value that is no key of the check with a working one', async () => {
    const secrets = awsCheckKeySecrets(client);
    const first = await issue(secrets);
    expect(first.code, first.err).toBe(0);
    const { keyId } = await oneWorkingCheckKey(secrets);
    expect((await issue(secrets)).out).toContain('nothing to do');

    // Someone put another value in it: the next run rotates the key and writes a new version (PutSecretValue).
    await client.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: 'not a key' }));
    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain(`Gave ${keyId} a new secret`);
    expect((await oneWorkingCheckKey(secrets)).keyId).toBe(keyId);
  });

  it("over the --stage path (the stack found by its outputs, its region's Secrets Manager): issued, then nothing to do", async () => {
    await deployStage(moto, (await localAssembly()).template, STAGES.staging.stackName);
    const restoreEnv = useEnv(motoEnv(moto));
    try {
      const onStage = async (...args: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const code = await runAdmin(
          [...args, '--stage', 'staging'],
          { out: (l) => out.push(l), err: (l) => err.push(l) },
          realDeps,
        );
        return { code, out: out.join('\n'), err: err.join('\n') };
      };
      const first = await onStage('keys', 'issue-check-key');
      expect(first.code, first.err).toBe(0);
      expect(first.out).toContain(`Its secret is stored in the secret ${SECRET}`);
      const listed = await onStage('keys', 'list', '--owner', 'pre-traffic-check', '--json');
      const keys = (JSON.parse(listed.out) as { keys: Array<{ keyId: string; plan: string }> }).keys;
      expect(keys).toEqual([expect.objectContaining({ plan: 'business' })]);
      const stored = await awsCheckKeySecrets(client).read(SECRET);
      expect(stored).toMatch(/^ask2?_/);
      expect(first.out).not.toContain(stored);
      // Nothing to do is said only when the stored secret is the key's own (its hash is the record's).
      const again = await onStage('keys', 'issue-check-key', '--show');
      expect(again.out).toContain(`${keys[0]!.keyId} is the check key and the secret ${SECRET} holds its secret`);
      expect(again.out).toContain(`API key: ${stored}`);
    } finally {
      restoreEnv();
    }
  }, 240_000);
});
