/**
 * The admin tool's `--stage` path against moto (test/helpers/moto.ts), an AWS emulator we did not write: the CLI
 * with its real target (realDeps: the stack's outputs from CloudFormation's DescribeStacks, then API Gateway and
 * DynamoDB through the real SDK clients, fake credentials, the SDK's endpoint override), on a stage made from the
 * synthesized template (its usage plans, pools and probation keys) and tables made from contract/tables.ts. Every
 * command the stage path has runs: create on every plan and Enterprise brackets, set-plan across brackets, revoke,
 * rotate, ban and unban, the listing, reconcile --all and purge of keys from before pools. After each, what moto's
 * API Gateway holds is checked against the records: the pool member every active key's requests count on is there,
 * on a usage plan of the stage.
 *
 * Then the project's control-plane fake beside moto, call by call: where the two answer differently, the table says
 * what AWS documents, so the fake is held to AWS and moto's gaps are named (and not mistaken for the tool's bugs).
 */
import { randomUUID } from 'node:crypto';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlanKeyCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BRACKET_POOL, poolValueOf } from '../../contract/key-pool.ts';
import { MEMBER_PLAN, usagePlanThrottle, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';
import { limitsOf, usageIdentifierKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { localStorage } from '../../lambdas/storage/provision.ts';
import { bracketPlanName, bracketPoolKeys, enterpriseBracket } from '../../lib/admin/brackets.ts';
import { realDeps, runAdmin } from '../../lib/admin/cli.ts';
import type { AdminTarget } from '../../lib/admin/targets.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { FakeControlPlane } from '../helpers/control-plane-fake.ts';
import {
  deployStage,
  gatewayInventory,
  MOTO_INSTALL,
  motoEnv,
  motoServerPath,
  startMoto,
  useEnv,
  type GatewayInventory,
  type Moto,
  type MotoStage,
} from '../helpers/moto.ts';

const STAGE = 'staging';
const MOTO = motoServerPath();
const SKIPPED = `moto_server is not installed, so the admin tool's stage path is not run against moto: ${MOTO_INSTALL}`;
// Said once per run where it applies, besides the skipped tests' names.
if (!MOTO) console.warn(SKIPPED);
const title = (what: string) => (MOTO ? what : `${what} (skipped: ${SKIPPED})`);

let moto: Moto;
let stage: MotoStage;
let restoreEnv: (() => void) | undefined;
let storage: Storage;
/** DynamoDB errors the admin's commands met since the last check. */
const storageErrors: string[] = [];
/** How far ahead of the real clock the admin's clock is (purge after the grace period, without waiting for it). */
let clockAheadMs = 0;

beforeAll(async () => {
  if (!MOTO) return;
  moto = await startMoto();
  stage = await deployStage(moto, (await localAssembly()).template, STAGES[STAGE].stackName);
  restoreEnv = useEnv(motoEnv(moto));
  storage = localStorage(moto.endpoint, stage.tableEnv);
});
afterAll(async () => {
  restoreEnv?.();
  await moto?.stop();
});

/** The tool's own `--stage` dependencies (realDeps), on a clock `clockAheadMs` ahead. */
const stageDeps = async (target: AdminTarget) => {
  const deps = await realDeps(target);
  // Every DynamoDB error the command met, tolerated or not (the exit code shows only what it did not tolerate).
  for (const c of [deps.storage!.ddb, deps.storage!.once.ddb])
    c.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) =>
        next(args).catch((e: Error) => {
          storageErrors.push(`${context.commandName}: ${e.name}`);
          throw e;
        })) as never,
      { step: 'initialize', name: 'motoStorageErrors' } as never,
    );
  return clockAheadMs ? { ...deps, now: () => Date.now() + clockAheadMs } : deps;
};

/** `npm run admin -- <args> --stage staging --json`: exit code, the JSON it printed, stderr. */
async function admin(...args: string[]): Promise<{ code: number; data: any; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    [...args, '--stage', STAGE, '--json'],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    stageDeps,
  );
  return { code, data: out.length ? JSON.parse(out.join('\n')) : undefined, err: err.join('\n') };
}

/** A command that must succeed: its JSON. */
async function ok(...args: string[]): Promise<any> {
  const r = await admin(...args);
  expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  return r.data;
}

const limitArgs = (l?: PlanLimits) => (l ? ['--per-minute', String(l.perMinute), '--per-day', String(l.perDay)] : []);
const create = (owner: string, plan: PlanName, limits?: PlanLimits) =>
  ok('keys', 'create', '--owner', owner, '--plan', plan, ...limitArgs(limits));

/** Every record of the keys table (moto's), from the byKeyId index's view of one key. */
async function recordsById(keyId: string): Promise<KeyRecord[]> {
  const out = await storage.doc.send(
    new QueryCommand({
      TableName: storage.tables.keys,
      IndexName: KEYS_TABLE.indexes[0].indexName,
      KeyConditionExpression: 'keyId = :k',
      ExpressionAttributeValues: { ':k': keyId },
    }),
  );
  return (out.Items ?? []) as KeyRecord[];
}

const onStage = (inv: GatewayInventory, planId: string) =>
  inv.plans.find((p) => p.id === planId)?.apiStages?.some((s) => s.apiId === stage.apiId && s.stage === 'v1');

/**
 * What is wrong at moto's gateway for these records: an active key whose pool member is missing or on no usage plan
 * of the stage (API Gateway would answer its requests 403), an Enterprise bracket's plan made twice, off the stage,
 * with figures other than a member's, or without its whole pool; an API key or usage plan no record, template or
 * bracket accounts for.
 */
async function gatewayProblems(records: KeyRecord[]): Promise<string[]> {
  const inv = await gatewayInventory(moto);
  const found: string[] = [];
  const byValue = new Map([...inv.keys].map(([id, k]) => [k.value, id]));
  const plansOf = (keyId: string) => [...inv.planKeys].filter(([, keys]) => keys.includes(keyId)).map(([p]) => p);
  for (const r of records) {
    if (r.apiGatewayKeyId || r.usagePlanId) found.push(`${r.keyId} still names an API key or usage plan of its own`);
    if (r.status !== 'active') continue;
    const member = byValue.get(poolValueOf(r, STAGE));
    const plans = member ? plansOf(member).filter((p) => onStage(inv, p)) : [];
    if (plans.length !== 1) found.push(`${r.keyId}: its pool member is on ${plans.length} usage plans of the stage`);
    if (r.plan !== 'enterprise') continue;
    const name = bracketPlanName(STAGE, enterpriseBracket(limitsOf(r)!));
    const bracket = inv.plans.filter((p) => p.name === name);
    if (bracket.length !== 1) {
      found.push(`${r.keyId}: ${bracket.length} usage plans named ${name}`);
      continue;
    }
    const p = bracket[0]!;
    if (!onStage(inv, p.id!)) found.push(`${name} is not on the stage`);
    // moto answers a quota set by UpdateUsagePlan as a string (AWS: a number): compared as numbers.
    const figures = [p.throttle?.rateLimit, p.throttle?.burstLimit, p.quota?.limit].map(Number);
    if (figures.join() !== [MEMBER_PLAN.rateLimit, MEMBER_PLAN.burstLimit, MEMBER_PLAN.quotaPerDay].join())
      found.push(`${name}: figures ${figures.join('/')}, not a pool member's`);
    const values = (inv.planKeys.get(p.id!) ?? []).map((id) => inv.keys.get(id)?.value).sort();
    const want = bracketPoolKeys(STAGE, limitsOf(r)!)
      .map((k) => k.value)
      .sort();
    if (values.join() !== want.join()) found.push(`${name}: members ${values.length} of ${BRACKET_POOL.apiKeys}`);
  }
  // Besides the template's and the brackets': what a record still names (a key from before pools, until purge).
  const ofBracket = (name?: string) => !!name?.startsWith(`animal-store-${STAGE}-enterprise-r`);
  const namedKeys = new Set(records.flatMap((r) => [r.apiGatewayKeyId, r.retiredApiKeyId]));
  const namedPlans = new Set(records.flatMap((r) => [r.usagePlanId, r.retiredUsagePlanId]));
  const templateKeys = new Set(stage.keyIds.values());
  const templatePlans = new Set(stage.planIds.values());
  for (const [id, k] of inv.keys)
    if (!templateKeys.has(id) && !namedKeys.has(id) && !ofBracket(k.name))
      found.push(`API key ${k.name} is accounted for by nothing`);
  for (const p of inv.plans)
    if (!templatePlans.has(p.id!) && !namedPlans.has(p.id) && !ofBracket(p.name))
      found.push(`usage plan ${p.name} is accounted for by nothing`);
  return found;
}

/** Every record of these owners, through the tool's own store on moto. */
async function recordsOf(...owners: string[]): Promise<KeyRecord[]> {
  return (await createKeyAdminStore(storage).list()).filter((r) => owners.includes(r.owner));
}

/** The counts of what the gateway holds, to show that a command made nothing there. */
const counts = async () => {
  const inv = await gatewayInventory(moto);
  return { plans: inv.plans.length, keys: inv.keys.size };
};

const E600 = { perMinute: 600, perDay: 50_000 };
const E6000 = { perMinute: 6_000, perDay: 5_000_000 };
const E60 = { perMinute: 60, perDay: 2_000 };
const OWNER = `moto-${randomUUID().slice(0, 8)}`;
/** Key ids by what the tests made them for. */
const ids: Record<string, string> = {};

describe.skipIf(!MOTO)(title("the admin tool's --stage path on moto's API Gateway and DynamoDB"), () => {
  // An error a command tolerated can still be a request moto refused (a shape AWS would refuse too): none may be
  // there but the conditional writes the tool makes on purpose (a ban lifted on every shard, whichever holds one).
  // DynamoDB's requests are all `POST /`: their errors are told apart by the client's middleware instead.
  afterEach(() => {
    expect(moto.takeErrors().filter((e) => !e.startsWith('POST / '))).toEqual([]);
    expect(storageErrors.splice(0).filter((e) => !e.endsWith(': ConditionalCheckFailedException'))).toEqual([]);
  });
  it("finds the stage by its stack's outputs and creates keys of every plan: only a bracket's first key touches API Gateway", async () => {
    const before = await counts();
    // The template's inventory, as moto holds it: 7 usage plans, every pool member and probation key on its plan.
    expect(before).toEqual({ plans: stage.planIds.size, keys: stage.keyIds.size });
    for (const plan of ['free', 'pro', 'business'] as const) ids[plan] = (await create(OWNER, plan)).keyId;
    expect(await counts(), 'no control-plane write for a standard plan').toEqual(before);

    const first = await create(OWNER, 'enterprise', E600);
    ids.e600 = first.keyId;
    expect(first).toMatchObject({ plan: 'enterprise', limits: E600, status: 'active' });
    expect(await counts()).toEqual({ plans: before.plans + 1, keys: before.keys + BRACKET_POOL.apiKeys });
    // Another key of the bracket finds its pool complete.
    ids.e600b = (await create(OWNER, 'enterprise', { perMinute: 500, perDay: 40_000 })).keyId;
    expect(enterpriseBracket({ perMinute: 500, perDay: 40_000 }).id).toBe(enterpriseBracket(E600).id);
    expect(await counts()).toEqual({ plans: before.plans + 1, keys: before.keys + BRACKET_POOL.apiKeys });
    ids.e6000 = (await create(OWNER, 'enterprise', E6000)).keyId;
    expect(await counts()).toEqual({ plans: before.plans + 2, keys: before.keys + 2 * BRACKET_POOL.apiKeys });

    for (const id of Object.values(ids)) expect(await ok('keys', 'show', id)).toMatchObject({ pending: false });
    expect(await gatewayProblems(await recordsOf(OWNER))).toEqual([]);
  });

  it('set-plan moves keys across brackets and between Enterprise and the standard plans', async () => {
    const before = await counts();
    // Into a bracket nobody used yet: its pool is made first.
    expect(await ok('keys', 'set-plan', ids.pro!, 'enterprise', ...limitArgs(E60))).toMatchObject({
      changed: true,
      plan: 'enterprise',
      limits: E60,
    });
    expect(await counts()).toEqual({ plans: before.plans + 1, keys: before.keys + BRACKET_POOL.apiKeys });
    // Into a bracket in use: nothing made.
    await ok('keys', 'set-plan', ids.e600!, 'enterprise', ...limitArgs(E6000));
    // Out of Enterprise, and back to a standard plan: no call at all.
    await ok('keys', 'set-plan', ids.e600b!, 'business');
    await ok('keys', 'set-plan', ids.business!, 'free');
    expect(await counts()).toEqual({ plans: before.plans + 1, keys: before.keys + BRACKET_POOL.apiKeys });
    const records = await recordsOf(OWNER);
    expect(Object.fromEntries(records.map((r) => [r.keyId, r.plan]))).toMatchObject({
      [ids.pro!]: 'enterprise',
      [ids.e600!]: 'enterprise',
      [ids.e600b!]: 'business',
      [ids.business!]: 'free',
    });
    expect(await gatewayProblems(records)).toEqual([]);
  });

  it("gives a bracket's usage plan made with its own figures a pool member's, in place (UpdateUsagePlan)", async () => {
    const limits = { perMinute: 100, perDay: 100 };
    const b = enterpriseBracket(limits);
    const gw = new APIGatewayClient(moto.config);
    // As a release before this one made it: sized for one customer.
    await gw.send(
      new CreateUsagePlanCommand({
        name: bracketPlanName(STAGE, b),
        apiStages: [{ apiId: stage.apiId, stage: 'v1' }],
        throttle: { rateLimit: 10, burstLimit: 1_000 },
        quota: { limit: 10_000, period: 'DAY' },
      }),
    );
    gw.destroy();
    ids.small = (await create(OWNER, 'enterprise', limits)).keyId;
    expect(await gatewayProblems(await recordsOf(OWNER))).toEqual([]);
  });

  it('finishes a bracket pool a failure left half-made: a member made but not attached is found by its name', async () => {
    const limits = { perMinute: 2_000, perDay: 1_000_000 };
    const b = enterpriseBracket(limits);
    const members = bracketPoolKeys(STAGE, limits);
    const gw = new APIGatewayClient(moto.config);
    const plan = await gw.send(
      new CreateUsagePlanCommand({
        name: bracketPlanName(STAGE, b),
        apiStages: [{ apiId: stage.apiId, stage: 'v1' }],
        throttle: { rateLimit: b.rateLimit, burstLimit: b.burstLimit },
        quota: { limit: b.quotaPerDay, period: 'DAY' },
      }),
    );
    const attached = await gw.send(new CreateApiKeyCommand({ ...members[0]!, enabled: true }));
    await gw.send(new CreateUsagePlanKeyCommand({ usagePlanId: plan.id!, keyId: attached.id!, keyType: 'API_KEY' }));
    // Made, and the command stopped before attaching it.
    await gw.send(new CreateApiKeyCommand({ ...members[1]!, enabled: true }));
    gw.destroy();
    const before = await counts();
    ids.halfMade = (await create(OWNER, 'enterprise', limits)).keyId;
    // CreateApiKey of the made member is refused (its value is in use): found again by its name, then attached.
    expect(moto.takeErrors()).toEqual(['POST /apikeys 409']);
    expect(await counts()).toEqual({ plans: before.plans, keys: before.keys + members.length - 2 });
    expect(await gatewayProblems(await recordsOf(OWNER))).toEqual([]);
  });

  it('revokes and rotates: one record per key id, the old secret gone, a revoked key refused', async () => {
    expect(await ok('keys', 'revoke', ids.free!)).toMatchObject({ status: 'revoked', alreadyRevoked: false });
    expect(await ok('keys', 'revoke', ids.free!)).toMatchObject({ status: 'revoked', alreadyRevoked: true });
    const before = (await recordsById(ids.e6000!))[0]!;
    const rotated = await ok('keys', 'rotate', ids.e6000!);
    expect(rotated.key).toMatch(/^ask2_/);
    const after = await recordsById(ids.e6000!);
    expect(after).toHaveLength(1);
    expect(after[0]!.hash).not.toBe(before.hash);
    expect(after[0]).toMatchObject({ plan: 'enterprise', limits: E6000, status: 'active' });
    expect(await ok('keys', 'reconcile', ids.e6000!)).toMatchObject({ did: [], waiting: [] });
    const refused = await admin('keys', 'rotate', ids.free!);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.err)).toMatchObject({ error: expect.stringMatching(/is revoked/) });
    expect(await gatewayProblems(await recordsOf(OWNER))).toEqual([]);
  });

  it('bans and unbans a key (its standing and counters on the state table)', async () => {
    const banned = await ok('keys', 'ban', ids.e6000!, '--minutes', '10');
    expect(banned.adminBannedUntil).toEqual(expect.any(String));
    expect((await ok('keys', 'show', ids.e6000!)).bannedUntil).toEqual(expect.any(String));
    expect(await ok('keys', 'usage', ids.e6000!)).toMatchObject({ keyId: ids.e6000 });
    await ok('keys', 'unban', ids.e6000!);
    expect(await ok('keys', 'show', ids.e6000!)).toMatchObject({ bannedUntil: null, pending: false });
  });

  it('lists keys by filter, page by page with the cursor it prints', async () => {
    // Every record the tool wrote already has the listing index's attributes.
    expect(await ok('keys', 'reindex')).toEqual({ updated: 0 });
    const mine = await recordsOf(OWNER);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await ok('keys', 'list', '--owner', OWNER, '--limit', '2', ...(after ? ['--after', after] : []));
      expect(page.keys.length).toBeLessThanOrEqual(2);
      seen.push(...page.keys.map((k: { keyId: string }) => k.keyId));
      after = page.next ?? undefined;
      pages++;
    } while (after && pages < 20);
    expect(seen.sort()).toEqual(mine.map((r) => r.keyId).sort());
    const revoked = await ok('keys', 'list', '--owner', OWNER, '--status', 'revoked');
    expect(revoked.keys.map((k: { keyId: string }) => k.keyId)).toEqual([ids.free]);
    const enterprise = await ok('keys', 'list', '--owner', OWNER, '--plan', 'enterprise');
    expect(enterprise.keys.map((k: { keyId: string }) => k.keyId).sort()).toEqual(
      mine
        .filter((r) => r.plan === 'enterprise')
        .map((r) => r.keyId)
        .sort(),
    );
  });

  it('reconcile --all moves keys from before pools into them and completes a bracket; purge deletes what they had of their own', async () => {
    const owner = `${OWNER}-old`;
    const store = createKeyAdminStore(storage);
    const gw = new APIGatewayClient(moto.config);
    const proPlan = stage.outputs.UsagePlanIdPro!;
    /** A key as the tool before pools left it: an API key (and for Enterprise a usage plan) of its own. */
    const legacy = async (plan: 'pro' | 'enterprise', limits?: PlanLimits, revokedMinutesAgo?: number) => {
      const { keyId } = await create(owner, plan, limits);
      const apiKey = await gw.send(
        new CreateApiKeyCommand({ name: `animal-store-${keyId}`, value: usageIdentifierKey(keyId), enabled: true }),
      );
      let own: string | undefined;
      if (plan === 'enterprise') {
        const t = usagePlanThrottle(limits!);
        own = (
          await gw.send(
            new CreateUsagePlanCommand({
              name: `animal-store-${STAGE}-enterprise-${keyId}`,
              apiStages: [{ apiId: stage.apiId, stage: 'v1' }],
              throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
              quota: { limit: t.quotaPerDay, period: 'DAY' },
            }),
          )
        ).id;
      }
      await gw.send(
        new CreateUsagePlanKeyCommand({ usagePlanId: own ?? proPlan, keyId: apiKey.id!, keyType: 'API_KEY' }),
      );
      const record = (await store.getById(keyId))!;
      const revoked = revokedMinutesAgo
        ? { status: 'revoked' as const, revokedAt: new Date(Date.now() - revokedMinutesAgo * 60_000).toISOString() }
        : {};
      await store.update(record, { apiGatewayKeyId: apiKey.id!, ...(own ? { usagePlanId: own } : {}), ...revoked }, [
        'reconciledVersion',
      ]);
      return { keyId, apiKey: apiKey.id!, plan: own };
    };
    const oldPro = await legacy('pro');
    const oldEnterprise = await legacy('enterprise', E600);
    const oldRevoked = await legacy('pro', undefined, 10);
    // A bracket made before its probation member (a release added it): the sweep makes it.
    const inv = await gatewayInventory(moto);
    const e600Plan = inv.plans.find((p) => p.name === bracketPlanName(STAGE, enterpriseBracket(E600)))!;
    const probation = bracketPoolKeys(STAGE, E600)[BRACKET_POOL.members]!;
    const probationId = [...inv.keys].find(([, k]) => k.value === probation.value)![0];
    await gw.send(new DeleteUsagePlanKeyCommand({ usagePlanId: e600Plan.id!, keyId: probationId }));
    await gw.send(new DeleteApiKeyCommand({ apiKey: probationId }));

    const sweep = await ok('keys', 'reconcile', '--all');
    expect(sweep.failed).toEqual([]);
    const did = Object.fromEntries(
      (sweep.reconciled as Array<{ keyId: string; did: string[] }>).map((r) => [r.keyId, r.did.join('; ')]),
    );
    expect(did[oldPro.keyId]).toMatch(/moved into its pool/);
    expect(did[oldEnterprise.keyId]).toMatch(/moved into its pool/);
    // Revoked 10 minutes ago: past the grace period, its API key is deleted by the sweep itself.
    expect(did[oldRevoked.keyId]).toMatch(/deleted its old API key/);
    expect(Object.values(did).join('\n')).toContain(`pool member ${probation.name}`);
    expect((sweep.waiting as Array<{ keyId: string }>).map((w) => w.keyId).sort()).toEqual(
      [oldPro.keyId, oldEnterprise.keyId].sort(),
    );
    expect(await ok('keys', 'purge'), 'within the grace period').toEqual({ purged: [], failed: [], finished: [] });

    // Past the grace period (the authorizer cache TTL, twice): purge deletes the API keys and the usage plan.
    clockAheadMs = 2 * STAGES[STAGE].authorizerCacheTtl.toMilliseconds() + 60_000;
    try {
      const purged = await ok('keys', 'purge');
      expect(purged.failed).toEqual([]);
      expect(purged.purged.map((k: { keyId: string }) => k.keyId).sort()).toEqual(
        [oldPro.keyId, oldEnterprise.keyId].sort(),
      );
      expect(await ok('keys', 'purge')).toEqual({ purged: [], failed: [], finished: [] });
    } finally {
      clockAheadMs = 0;
    }
    const left = await gatewayInventory(moto);
    for (const k of [oldPro, oldEnterprise, oldRevoked]) expect(left.keys.has(k.apiKey), k.keyId).toBe(false);
    expect(left.plans.some((p) => p.id === oldEnterprise.plan)).toBe(false);

    // A key revoked long ago and never swept: purge alone finishes it.
    const lateRevoked = await legacy('pro', undefined, 30);
    const alone = await ok('keys', 'purge');
    expect(alone).toMatchObject({ failed: [], purged: [expect.objectContaining({ keyId: lateRevoked.keyId })] });
    expect((await gatewayInventory(moto)).keys.has(lateRevoked.apiKey)).toBe(false);
    gw.destroy();

    const records = await recordsOf(OWNER, owner);
    expect(records.filter((r) => (r.reconciledVersion ?? 0) !== (r.version ?? 0))).toEqual([]);
    expect(records.filter((r) => r.retiredApiKeyId || r.retiredUsagePlanId)).toEqual([]);
    expect(await gatewayProblems(records)).toEqual([]);
  });
});

/** One call's outcome: `ok`, or the error's name (a non-JSON 500 from moto is `500`). */
type Outcome = string;
const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    () => 'ok',
    (e: Error & { $metadata?: { httpStatusCode?: number } }) => (e.$metadata?.httpStatusCode === 500 ? '500' : e.name),
  );

/**
 * The same control-plane calls on the fake and on moto, on the same starting inventory (two usage plans on the
 * stage, one API key), each with what AWS documents ("Amazon API Gateway REST API Reference", the operation's
 * Errors): the fake must answer as AWS does; where moto does not, the row says so and why the tool does not depend on
 * it.
 */
describe.skipIf(!MOTO)(title('the control-plane fake beside moto, call by call'), () => {
  const VALUE = 'animalstoreparityprobekeyvalue0000000001';
  interface World {
    send: (c: object) => Promise<any>;
    planA: string;
    planB: string;
    key: string;
  }
  const apiStage = { apiId: 'api123', stage: 'v1' };
  async function world(send: (c: object) => Promise<any>): Promise<World> {
    const plan = async (name: string) => (await send(new CreateUsagePlanCommand({ name, apiStages: [apiStage] }))).id;
    const planA = await plan('parity-a');
    const planB = await plan('parity-b');
    const key = (await send(new CreateApiKeyCommand({ name: 'parity-key', value: VALUE, enabled: true }))).id;
    return { send, planA, planB, key };
  }

  /** [what, AWS (and the fake), moto, the calls]: outcomes of the last call. */
  const PROBES: Array<[string, Outcome, Outcome, (w: World) => object[]]> = [
    [
      'CreateApiKey with a value in use',
      'ConflictException',
      'ConflictException',
      () => [new CreateApiKeyCommand({ name: 'x', value: VALUE })],
    ],
    [
      'CreateApiKey with a value under 20 characters',
      'BadRequestException',
      'BadRequestException',
      () => [new CreateApiKeyCommand({ name: 'x', value: 'short' })],
    ],
    [
      'DeleteApiKey of no key',
      'NotFoundException',
      'NotFoundException',
      () => [new DeleteApiKeyCommand({ apiKey: 'nokey' })],
    ],
    [
      'GetUsagePlan of no plan',
      'NotFoundException',
      'NotFoundException',
      () => [new GetUsagePlanCommand({ usagePlanId: 'noplan' })],
    ],
    [
      'GetUsagePlanKey of a key not on the plan',
      'NotFoundException',
      'NotFoundException',
      (w) => [new GetUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key })],
    ],
    [
      'CreateUsagePlanKey of no key',
      'NotFoundException',
      'NotFoundException',
      (w) => [new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: 'nokey', keyType: 'API_KEY' })],
    ],
    [
      'CreateUsagePlanKey, then GetUsagePlanKey',
      'ok',
      'ok',
      (w) => [
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key, keyType: 'API_KEY' }),
        new GetUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key }),
      ],
    ],
    // moto accepts both (no ConflictException): the tool's attach treats Conflict as "look whether it is on", so on
    // moto it never takes that branch; the fake's converge tests do.
    [
      'CreateUsagePlanKey of a key already on that plan',
      'ConflictException',
      'ok',
      (w) => [
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key, keyType: 'API_KEY' }),
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key, keyType: 'API_KEY' }),
      ],
    ],
    [
      'CreateUsagePlanKey of a key on another plan of the stage',
      'ConflictException',
      'ok',
      (w) => [
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key, keyType: 'API_KEY' }),
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planB, keyId: w.key, keyType: 'API_KEY' }),
      ],
    ],
    // moto raises a Python KeyError (HTTP 500, an HTML page): the tool's detach and deletePlan, which treat
    // NotFoundException as done, would fail there on a rerun; AWS answers NotFoundException.
    [
      'DeleteUsagePlanKey of a key not on the plan',
      'NotFoundException',
      '500',
      (w) => [new DeleteUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key })],
    ],
    [
      'DeleteUsagePlan of no plan',
      'NotFoundException',
      '500',
      () => [new DeleteUsagePlanCommand({ usagePlanId: 'noplan' })],
    ],
    // moto deletes it; AWS refuses a plan still associated with a stage, which is why deletePlan removes the stage first.
    [
      'DeleteUsagePlan of a plan still on a stage',
      'BadRequestException',
      'ok',
      (w) => [new DeleteUsagePlanCommand({ usagePlanId: w.planA })],
    ],
  ];

  let gw: APIGatewayClient;
  /** The fake's send and moto's, each answering as the SDK's output types do. */
  const senders = (fake: FakeControlPlane): Array<(c: object) => Promise<any>> => [
    (c) => fake.send(c),
    (c) => gw.send(c as never),
  ];
  beforeAll(() => {
    gw = new APIGatewayClient(moto.config);
  });
  afterAll(() => gw?.destroy());

  /** The last call's outcome on a fresh world of the fake, and on moto (its inventory reset first). */
  async function both(calls: (w: World) => object[]): Promise<{ fake: Outcome; moto: Outcome }> {
    const fake = new FakeControlPlane(Date.UTC(2036, 0, 1));
    // Paced as the tool paces: the fake's quotas are not what is compared here.
    const fakeSend = async (c: object) => {
      await fake.sleep(20_000);
      return fake.send(c);
    };
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
    const run = async (send: (c: object) => Promise<any>) => {
      const w = await world(send);
      const list = calls(w);
      for (const c of list.slice(0, -1)) await send(c);
      return outcome(send(list.at(-1)!));
    };
    return { fake: await run(fakeSend), moto: await run((c) => gw.send(c as never)) };
  }

  it.each(PROBES)('%s: AWS %s, the fake the same; moto %s', async (_what, aws, motoSays, calls) => {
    expect(await both(calls)).toEqual({ fake: aws, moto: motoSays });
  });

  it('GetApiKeys answers values only when asked (includeValues); GetUsagePlanKeys always does', async () => {
    const fake = new FakeControlPlane(Date.UTC(2036, 0, 1));
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
    for (const send of senders(fake)) {
      await world(send);
      const plain = await send(new GetApiKeysCommand({ nameQuery: 'parity' }));
      const withValues = await send(new GetApiKeysCommand({ nameQuery: 'parity', includeValues: true }));
      expect(plain.items.map((k: { value?: string }) => k.value)).toEqual([undefined]);
      expect(withValues.items.map((k: { value?: string }) => k.value)).toEqual([VALUE]);
    }
  });

  it('UpdateUsagePlan sets the figures in place; moto answers the quota it set as a string (AWS: a number)', async () => {
    const fake = new FakeControlPlane(Date.UTC(2036, 0, 1));
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
    const figures: unknown[] = [];
    for (const send of senders(fake)) {
      const w = await world(send);
      await send(
        new UpdateUsagePlanCommand({
          usagePlanId: w.planA,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: '50' },
            { op: 'replace', path: '/throttle/burstLimit', value: '100' },
            { op: 'replace', path: '/quota/limit', value: '5000' },
          ],
        }),
      );
      const p = await send(new GetUsagePlanCommand({ usagePlanId: w.planA }));
      figures.push([p.throttle.rateLimit, p.throttle.burstLimit, p.quota.limit]);
    }
    expect(figures).toEqual([
      [50, 100, 5000],
      [50, 100, '5000'],
    ]);
  });

  it('pages: neither the fake nor moto pages GetUsagePlans by `limit` (AWS does, with `position`)', async () => {
    const fake = new FakeControlPlane(Date.UTC(2036, 0, 1));
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
    for (const send of senders(fake)) {
      await world(send);
      const out = await send(new GetUsagePlansCommand({ limit: 1 }));
      expect([out.items.length, out.position]).toEqual([2, undefined]);
    }
  });
});
