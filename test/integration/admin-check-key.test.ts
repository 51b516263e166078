/**
 * `keys issue-check-key --stage <stage>`: one command issues the pre-traffic check's keys, one per plan the stage
 * sells, and stores them by plan in the secret the hook reads. Over the CLI, on DynamoDB Local and the local API (each
 * key stored is one its authorizer lets through, on its plan), with Secrets Manager in memory; where moto_server is
 * installed, also its port on moto's Secrets Manager, and the whole `--stage` path (the stack deployed to moto, found
 * by its outputs). Rerun, it says there is nothing to do; stopped after any key's write or any write of the secret
 * (failing, or the process dying), the command its failure names finishes it with one active check key per plan, each
 * stored and working. A secret of the old form (one key) is upgraded, keeping that key when it is the check's.
 */
import { SecretsManagerClient, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { checkKeysOf, formatCheckKeys } from '../../lambdas/hooks/check-keys.ts';
import { CHECK_KEY_ENTERPRISE_LIMITS } from '../../lib/admin/check-key.ts';
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

/** Secrets Manager in memory; `failWrites` writes throw (throttled), as AWS's would, after `okWrites` land. */
class MemorySecrets implements CheckKeySecretPort {
  readonly values = new Map<string, string>();
  writes = 0;
  okWrites = 0;
  failWrites = 0;
  async read(name: string) {
    return this.values.get(name);
  }
  async write(name: string, value: string) {
    if (this.okWrites > 0) this.okWrites--;
    else if (this.failWrites > 0) {
      this.failWrites--;
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    }
    this.writes++;
    this.values.set(name, value);
  }
}

let api: TestApi;
let deps: AdminDeps;
// Every case on fresh tables: the check keys are per stage's tables, found by their owner.
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

interface Listed {
  keyId: string;
  plan: PlanName;
  limits?: { perMinute: number; perDay: number };
  undelivered?: boolean;
}

/** The active keys of the check's owner, as `keys list` shows them. */
async function checkKeys() {
  const r = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'pre-traffic-check', '--status', 'active', '--json');
  expect(r.code, r.err).toBe(0);
  return (JSON.parse(r.out) as { keys: Listed[] }).keys;
}

/**
 * Exactly one active check key per plan, Enterprise's with the check's limits, and the secret holding each plan's key
 * by plan, one the API lets through. Returns each plan's key id and stored key.
 */
async function everyPlanWorking(secrets: { read(name: string): Promise<string | undefined> }) {
  const keys = await checkKeys();
  expect(keys.map((k) => k.plan).sort()).toEqual([...PLAN_NAMES].sort());
  expect(keys.filter((k) => k.undelivered)).toEqual([]);
  expect(keys.find((k) => k.plan === 'enterprise')?.limits).toEqual(CHECK_KEY_ENTERPRISE_LIMITS);
  const stored = await secrets.read(SECRET);
  const parsed = checkKeysOf(stored!);
  expect(parsed.missing).toEqual([]);
  const out = {} as Record<PlanName, { keyId: string; key: string }>;
  for (const plan of PLAN_NAMES) {
    const key = parsed.byPlan[plan]!;
    expect(await status(key), plan).toBe(200);
    out[plan] = { keyId: keys.find((k) => k.plan === plan)!.keyId, key };
  }
  return out;
}

const ids = (w: Record<PlanName, { keyId: string }>) => PLAN_NAMES.map((p) => w[p].keyId);

/** The command a failure names (its `error:` line), as it would be pasted. */
const named = (err: string) => /run `(keys [^`]+)`/.exec(err)?.[1];

/** A secret port whose `n`th write dies (never answers: the process is gone), before or after it lands. */
function dyingAt(secrets: MemorySecrets, n: number, landed: boolean) {
  let died!: () => void;
  const dead = new Promise<void>((resolve) => (died = resolve));
  let writes = 0;
  const port: CheckKeySecretPort = {
    read: (name) => secrets.read(name),
    write: async (name, value) => {
      if (++writes < n) return secrets.write(name, value);
      if (landed) await secrets.write(name, value);
      died();
      return new Promise(() => {});
    },
  };
  return { port, dead };
}

describe('keys issue-check-key', () => {
  it("creates every plan's key and stores them by plan without printing them; run again, there is nothing to do", async () => {
    const secrets = new MemorySecrets();
    const first = await issue(secrets);
    expect(first.code, first.err).toBe(0);
    const made = await everyPlanWorking(secrets);
    // Every plan's key id and what was done, then the secret.
    for (const plan of PLAN_NAMES)
      expect(first.out).toMatch(new RegExp(`^  ${plan} +${made[plan].keyId}  created`, 'm'));
    expect(first.out).toContain('enterprise  ' + made.enterprise.keyId + '  created (10/min, 100/day)');
    expect(first.out).toContain(`Stored every plan's key in the secret ${SECRET}`);
    for (const plan of PLAN_NAMES) expect(first.out).not.toContain(made[plan].key);
    expect(first.out).toContain('--show prints them');
    expect(secrets.values.get(SECRET)).toBe(
      formatCheckKeys(Object.fromEntries(PLAN_NAMES.map((p) => [p, made[p].key]))),
    );

    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    for (const plan of PLAN_NAMES)
      expect(again.out).toMatch(
        new RegExp(`^  ${plan} +${made[plan].keyId}  in place \\(the secret holds its secret\\)`, 'm'),
      );
    expect(again.out).toContain(`The secret ${SECRET} holds every plan's key: nothing to do`);
    expect(await everyPlanWorking(secrets)).toEqual(made);

    // --show prints the keys the hook reads; --json says what was done, plan by plan.
    const shown = await issue(secrets, ['--show', '--json']);
    expect(shown.code, shown.err).toBe(0);
    const data = JSON.parse(shown.out) as {
      did: string;
      stored: boolean;
      keys: Array<Listed & { did: string; key: string }>;
    };
    expect(data).toMatchObject({ did: 'nothing', stored: false, secretName: SECRET });
    expect(data.keys.map((k) => [k.plan, k.did, k.keyId, k.key])).toEqual(
      PLAN_NAMES.map((p) => [p, 'nothing', made[p].keyId, made[p].key]),
    );

    // An admin change like any other: each key's history has its create, by the tool's user.
    const history = await runLocalAdmin(deps, 'keys', 'history', made.enterprise.keyId);
    expect(history.out).toMatch(/create --plan enterprise {2}by local:/);
  });

  it.each([1, 2, 3, 4])(
    'the secret write after the key of plan %i fails: the failure names the command that finishes it, keeping every key',
    async (n) => {
      const secrets = new MemorySecrets();
      secrets.okWrites = n - 1;
      secrets.failWrites = 1;
      const failed = await issue(secrets);
      expect(failed.code).toBe(1);
      const plan = PLAN_NAMES[n - 1]!;
      expect(failed.err).toMatch(
        new RegExp(`the ${plan} check key key_\\w+ is made, but the secret ${SECRET} was not written`),
      );
      expect(failed.err).toContain('ThrottlingException');
      expect(named(failed.err)).toBe('keys issue-check-key');
      // What it did before it stopped is printed: the keys made so far.
      for (const p of PLAN_NAMES.slice(0, n)) expect(failed.out).toMatch(new RegExp(`^  ${p} +key_\\w+  created`, 'm'));
      expect(failed.out).toContain("Stopped before every plan's key was stored");
      const before = await checkKeys();
      expect(before).toHaveLength(n);

      const finished = await issue(secrets);
      expect(finished.code, finished.err).toBe(0);
      const now = await everyPlanWorking(secrets);
      // The same keys: those stored are in place, the one whose secret was lost got a new secret under its id.
      for (const k of before) expect(now[k.plan].keyId).toBe(k.keyId);
      expect(finished.out).toMatch(new RegExp(`^  ${plan} +${now[plan].keyId}  given a new secret`, 'm'));
      for (const p of PLAN_NAMES.slice(0, n - 1))
        expect(finished.out).toMatch(new RegExp(`^  ${p} +\\S+  in place`, 'm'));
      for (const p of PLAN_NAMES.slice(n)) expect(finished.out).toMatch(new RegExp(`^  ${p} +\\S+  created`, 'm'));
      const history = await runLocalAdmin(deps, 'keys', 'history', now[plan].keyId);
      expect(history.out).toMatch(new RegExp(`create --plan ${plan}[^\\n]*\\n[^\\n]*rotate {2}by`));
      expect((await issue(secrets)).out).toContain('nothing to do');
    },
  );

  it.each([...[1, 2, 3, 4].map((n) => [n, false] as const), ...[1, 2, 3, 4].map((n) => [n, true] as const)])(
    'the process dying at the secret write after key %i (landed: %s) is finished by the command run again',
    async (n, landed) => {
      const secrets = new MemorySecrets();
      const { port, dead } = dyingAt(secrets, n, landed);
      expect((await issue(port, [], {}, dead)).code).toBe('killed');
      const before = await checkKeys();
      expect(before).toHaveLength(n);
      // What the secret holds is read as it is: the keys stored so far, and no other.
      expect(checkKeysOf(secrets.values.get(SECRET) ?? '{}').missing).toHaveLength(
        PLAN_NAMES.length - (landed ? n : n - 1),
      );

      const finished = await issue(secrets);
      expect(finished.code, finished.err).toBe(0);
      const now = await everyPlanWorking(secrets);
      for (const k of before) expect(now[k.plan].keyId).toBe(k.keyId);
      // Only a key whose secret never reached the secret is given a new one.
      const rotated = finished.out.match(/given a new secret/g) ?? [];
      expect(rotated).toHaveLength(landed ? 0 : 1);
      expect((await issue(secrets)).out).toContain('nothing to do');
    },
  );

  it('the process dying inside a create (before its secret works) is finished under the same key id', async () => {
    const secrets = new MemorySecrets();
    expect((await issue(secrets)).code).toBe(0);
    const made = await everyPlanWorking(secrets);
    // The Pro key revoked: the next run makes a new one, and dies in its activation (the write that makes it work).
    expect((await runLocalAdmin(deps, 'keys', 'revoke', made.pro.keyId)).code).toBe(0);
    let died!: () => void;
    const dead = new Promise<void>((resolve) => (died = resolve));
    const store = { ...deps.store, replaceHash: () => (died(), new Promise<void>(() => {})) };
    expect((await issue(secrets, [], { store }, dead)).code).toBe('killed');
    const left = (await checkKeys()).find((k) => k.plan === 'pro');
    expect(left?.undelivered).toBe(true);

    const finished = await issue(secrets);
    expect(finished.code, finished.err).toBe(0);
    const now = await everyPlanWorking(secrets);
    expect(now.pro.keyId).toBe(left!.keyId);
    expect(ids(now).filter((id) => id !== left!.keyId)).toEqual(ids(made).filter((id) => id !== made.pro.keyId));
    expect(await status(made.pro.key)).toBe(401);
  });

  /** A check key an admin made by hand with `keys create`, on `plan` (--another: one may be there already). */
  const madeByHand = async (plan: string, owner = 'pre-traffic-check') =>
    JSON.parse(
      (await runLocalAdmin(deps, 'keys', 'create', '--owner', owner, '--plan', plan, '--another', '--json')).out,
    ) as {
      key: string;
      keyId: string;
    };

  it("upgrades the old form (one key): the check's Business key keeps its secret, the other plans get theirs", async () => {
    const old = await madeByHand('business');
    const secrets = new MemorySecrets();
    secrets.values.set(SECRET, old.key);
    const r = await issue(secrets);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`^  business +${old.keyId}  in place`, 'm'));
    expect(r.out).toContain(
      `Stored every plan's key in the secret ${SECRET} (it held the old form, one key: now one per plan)`,
    );
    const now = await everyPlanWorking(secrets);
    expect(now.business).toEqual({ keyId: old.keyId, key: old.key });
    expect((await issue(secrets)).out).toContain('nothing to do');
  });

  it("upgrades an old form holding a Free check key (made by hand, as the docs once allowed) as that plan's", async () => {
    const old = await madeByHand('free');
    const secrets = new MemorySecrets();
    secrets.values.set(SECRET, `${old.key}\n`);
    expect((await issue(secrets)).code).toBe(0);
    expect((await everyPlanWorking(secrets)).free).toEqual({ keyId: old.keyId, key: old.key });
  });

  it("never touches a customer's key the secret held (pasted by hand): it is dropped from the secret, still working", async () => {
    const customer = await madeByHand('pro', 'acme');
    const secrets = new MemorySecrets();
    secrets.values.set(SECRET, customer.key);
    expect((await issue(secrets)).code).toBe(0);
    const now = await everyPlanWorking(secrets);
    expect(now.pro.keyId).not.toBe(customer.keyId);
    expect(await status(customer.key)).toBe(200);
    const listed = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'acme', '--json');
    expect((JSON.parse(listed.out) as { keys: Listed[] }).keys).toEqual([
      expect.objectContaining({ keyId: customer.keyId }),
    ]);
  });

  it("a plan's key in the secret that is not the check's gets a new secret of the check's key; the rest stay", async () => {
    const secrets = new MemorySecrets();
    expect((await issue(secrets)).code).toBe(0);
    const made = await everyPlanWorking(secrets);
    const byPlan = Object.fromEntries(PLAN_NAMES.map((p) => [p, made[p].key]));
    secrets.values.set(SECRET, formatCheckKeys({ ...byPlan, enterprise: 'ask2_not-the-check-keys-secret-at-all' }));
    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(new RegExp(`^  enterprise +${made.enterprise.keyId}  given a new secret`, 'm'));
    const now = await everyPlanWorking(secrets);
    expect(ids(now)).toEqual(ids(made));
    // The secret it replaced was nobody's: no overlap, refused from now on.
    expect(await status(made.enterprise.key)).toBe(401);
    expect(now.free.key).toBe(made.free.key);
  });

  it('a revoked check key is replaced by a new one; two active check keys on a plan are refused, naming the one to revoke', async () => {
    const secrets = new MemorySecrets();
    expect((await issue(secrets)).code).toBe(0);
    const made = await everyPlanWorking(secrets);
    expect((await runLocalAdmin(deps, 'keys', 'revoke', made.business.keyId)).code).toBe(0);
    expect((await issue(secrets)).out).toMatch(/^ {2}business +key_\w+ {2}created$/m);
    const now = await everyPlanWorking(secrets);
    expect(now.business.keyId).not.toBe(made.business.keyId);
    expect(await status(made.business.key)).toBe(401);

    // A second one made by hand: the command does not choose for the admin which secret the hook keeps using.
    const { keyId: second } = await madeByHand('pro');
    const refused = await issue(secrets);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`2 active pro keys have owner pre-traffic-check`);
    expect(refused.err).toContain(`keep ${now.pro.keyId} (its secret is stored)`);
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

/**
 * Two `keys issue-check-key` at once, made deterministic: the other admin's whole run happens at one step of this
 * run (just before its n-th call on the key store or the secret), for each step of a run from each starting state.
 * Neither run may exit 0 unless what it printed is what is left (one active check key per plan, the secret holding
 * each one's working secret); a run that met the other's change says what, who and when, and names the rerun, which
 * converges.
 */
describe('two keys issue-check-key at once', () => {
  type Step = () => Promise<unknown>;
  /** `on` whose n-th call on the store or the secret first runs `other` to its end (once). */
  function otherAt(on: AdminDeps, secrets: CheckKeySecretPort, n: number, other: Step) {
    let calls = 0;
    const step = async () => {
      if (++calls === n) await other();
    };
    const wrap = <T extends object>(port: T, names: ReadonlyArray<keyof T>): T => {
      const out = { ...port };
      for (const k of names) {
        const f = port[k] as (...x: unknown[]) => unknown;
        out[k] = (async (...a: unknown[]) => (await step(), f.apply(port, a))) as T[keyof T];
      }
      return out;
    };
    const store = wrap(on.store, Object.keys(on.store) as Array<keyof AdminDeps['store']>);
    return { deps: { ...on, store, secrets: wrap(secrets, ['read', 'write']) } as AdminDeps, calls: () => calls };
  }

  /** Whether the state is right: one active check key per plan, each taking the secret stored for its plan. */
  async function rightState(secrets: MemorySecrets) {
    const keys = await checkKeys();
    const value = secrets.values.get(SECRET);
    if (!value || keys.some((k) => k.undelivered) || keys.length !== PLAN_NAMES.length) return false;
    const parsed = checkKeysOf(value);
    for (const plan of PLAN_NAMES) {
      const listed = keys.filter((k) => k.plan === plan);
      const record = listed.length === 1 ? await deps.store.getById(listed[0]!.keyId) : undefined;
      if (!record || !parsed.byPlan[plan] || record.hash !== hashKey(parsed.byPlan[plan]!)) return false;
    }
    return true;
  }

  /** Starting states: nothing yet; every key made but the secret lost (each run rotates). */
  const STARTS = {
    fresh: async (_s: MemorySecrets) => {},
    'keys without a stored secret': async (s: MemorySecrets) => {
      expect((await issue(s)).code).toBe(0);
      s.values.clear();
    },
  };

  it.each(Object.keys(STARTS) as Array<keyof typeof STARTS>)(
    'from "%s", the other run at each step: never both 0 with a wrong state, and the rerun converges',
    async (start) => {
      // How many calls a run from this state makes alone.
      const solo = new MemorySecrets();
      await STARTS[start](solo);
      const probe = otherAt(deps, solo, 0, async () => {});
      const alone = await run(probe.deps, ['keys', 'issue-check-key', '--stage', 'staging', '--json']);
      expect(alone.code, alone.err).toBe(0);
      const steps = probe.calls();
      const told: string[] = [];
      for (let n = 1; n <= steps; n++) {
        api.close();
        ({ api, deps } = await startLocalAdmin());
        const secrets = new MemorySecrets();
        await STARTS[start](secrets);
        let other: Awaited<ReturnType<typeof run>> | undefined;
        const a = otherAt(deps, secrets, n, async () => {
          other = await run({ ...deps, secrets }, ['keys', 'issue-check-key', '--stage', 'staging', '--json']);
        });
        const mine = await run(a.deps, ['keys', 'issue-check-key', '--stage', 'staging', '--json']);
        const right = await rightState(secrets);
        const at = `${start}, the other run before call ${n}: ${mine.err} / ${other?.err}`;
        // Whoever exits 0 printed what is left; the last to finish is the one that can know it.
        if (mine.code === 0) {
          expect(right, at).toBe(true);
          const printedIds = (JSON.parse(mine.out) as { keys: Listed[] }).keys.map((k) => k.keyId).sort();
          expect(printedIds, at).toEqual((await checkKeys()).map((k) => k.keyId).sort());
        }
        if (mine.code !== 0) {
          const error = (JSON.parse(mine.err.split('\n').at(-1)!) as { error: string; next: string }).error;
          told.push(error);
          expect(JSON.parse(mine.err.split('\n').at(-1)!).next, at).toBe(
            'npm run admin -- keys issue-check-key --stage staging --json',
          );
        }
        const again = await issue(secrets);
        expect(again.code, `${at}; rerun: ${again.err}`).toBe(0);
        expect(await rightState(secrets), at).toBe(true);
        expect((await issue(secrets)).out, at).toContain('nothing to do');
      }
      // The runs that met the other's change said what it was and who made it, and when.
      for (const e of told.filter((x) => x.startsWith('another admin changed')))
        expect(e).toMatch(/(by local:\S+ at \d{4}-|another run made|under way|written again)/);
    },
    300_000,
  );
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

  it('creates the secret, then replaces a value that is neither form with working keys', async () => {
    const secrets = awsCheckKeySecrets(client);
    const first = await issue(secrets);
    expect(first.code, first.err).toBe(0);
    const made = await everyPlanWorking(secrets);
    expect((await issue(secrets)).out).toContain('nothing to do');

    // Someone put another value in it: the next run rotates every key and writes new versions (PutSecretValue).
    await client.send(new PutSecretValueCommand({ SecretId: SECRET, SecretString: 'not a key' }));
    const again = await issue(secrets);
    expect(again.code, again.err).toBe(0);
    expect(again.out.match(/given a new secret/g)).toHaveLength(PLAN_NAMES.length);
    expect(ids(await everyPlanWorking(secrets))).toEqual(ids(made));
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
      expect(first.out).toContain(`Stored every plan's key in the secret ${SECRET}`);
      const listed = await onStage('keys', 'list', '--owner', 'pre-traffic-check', '--json');
      const keys = (JSON.parse(listed.out) as { keys: Listed[] }).keys;
      expect(keys.map((k) => k.plan).sort()).toEqual([...PLAN_NAMES].sort());
      const stored = checkKeysOf((await awsCheckKeySecrets(client).read(SECRET))!);
      expect(stored.missing).toEqual([]);
      for (const plan of PLAN_NAMES) expect(first.out).not.toContain(stored.byPlan[plan]);
      // Nothing to do is said only when each stored key is its key's own (its hash is the record's).
      const again = await onStage('keys', 'issue-check-key', '--show');
      expect(again.out).toContain(`The secret ${SECRET} holds every plan's key: nothing to do`);
      for (const plan of PLAN_NAMES) expect(again.out).toContain(`API key (${plan}): ${stored.byPlan[plan]}`);
    } finally {
      restoreEnv();
    }
  }, 240_000);
});
