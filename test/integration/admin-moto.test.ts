/**
 * The admin tool's `--stage` path against moto (test/helpers/moto.ts), an AWS emulator we did not write: the CLI
 * with its real target (realDeps: the stack's outputs from CloudFormation's DescribeStacks, then DynamoDB and, for
 * `keys remove-release-api-keys`, API Gateway through the real SDK clients, fake credentials, the SDK's endpoint
 * override), on a stage made from the synthesized template (its usage plans and plan keys) and tables made from
 * contract/tables.ts. Every key command runs and leaves moto's API Gateway as the template made it; the removal
 * deletes what release 3357b0c's tool made there, the stack read through a CloudFormation stand-in (moto's
 * CloudFormation lists no API Gateway resource but the REST API).
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
  GetUsagePlanCommand,
  GetUsagePlanKeysCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_NAMES, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { localStorage } from '../../lambdas/storage/provision.ts';
import { realDeps, runAdmin } from '../../lib/admin/cli.ts';
import type { AdminTarget } from '../../lib/admin/targets.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { cloudFormationStandIn } from '../helpers/aws-wire-stand-ins.ts';
import { FakeControlPlane } from '../helpers/control-plane-fake.ts';
import {
  deployStage,
  gatewayInventory,
  MOTO_INSTALL,
  motoEnv,
  motoServerPath,
  startMoto,
  useEnv,
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

/** The tool's own `--stage` dependencies (realDeps). */
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
  return deps;
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

/**
 * What moto's gateway holds, as comparable data: every usage plan with its stages and keys, every API key. A plan's
 * keys are the API keys that exist: moto goes on listing a deleted key on its plans (AWS does not; a parity test
 * below says so).
 */
async function gatewayState() {
  const inv = await gatewayInventory(moto);
  return {
    plans: inv.plans
      .map((p) => ({
        id: p.id,
        stages: p.apiStages?.map((s) => `${s.apiId}:${s.stage}`),
        keys: inv.planKeys.get(p.id!)?.filter((k) => inv.keys.has(k)),
      }))
      .sort((a, b) => a.id!.localeCompare(b.id!)),
    keys: [...inv.keys.keys()].sort(),
  };
}

/** Every record of these owners, through the tool's own store on moto. */
async function recordsOf(...owners: string[]): Promise<KeyRecord[]> {
  return (await createKeyAdminStore(storage).list()).filter((r) => owners.includes(r.owner));
}

const E600 = { perMinute: 600, perDay: 50_000 };
const E6000 = { perMinute: 6_000, perDay: 5_000_000 };
const OWNER = `moto-${randomUUID().slice(0, 8)}`;
/** Key ids by what the tests made them for. */
const ids: Record<string, string> = {};

describe.skipIf(!MOTO)(
  title("the admin tool's --stage path on moto's DynamoDB, API Gateway and CloudFormation"),
  () => {
    // An error a command tolerated can still be a request moto refused (a shape AWS would refuse too): none may be
    // there but the conditional writes the tool makes on purpose. DynamoDB's requests are all `POST /`: their errors
    // are told apart by the client's middleware instead.
    afterEach(() => {
      expect(moto.takeErrors().filter((e) => !e.startsWith('POST / '))).toEqual([]);
      expect(storageErrors.splice(0).filter((e) => !e.endsWith(': ConditionalCheckFailedException'))).toEqual([]);
    });

    it("finds the stage by its stack's outputs; keys of every plan made, moved, rotated, banned and revoked change nothing at its API Gateway", async () => {
      const before = await gatewayState();
      // The template's inventory, as moto holds it: a usage plan per plan, each with its plan key.
      expect(before.plans.map((p) => p.keys?.length)).toEqual(PLAN_NAMES.map(() => 1));
      for (const plan of ['free', 'pro', 'business'] as const) ids[plan] = (await create(OWNER, plan)).keyId;
      ids.e600 = (await create(OWNER, 'enterprise', E600)).keyId;
      expect(await ok('keys', 'set-plan', ids.pro!, 'enterprise', ...limitArgs(E6000))).toMatchObject({
        changed: true,
        plan: 'enterprise',
        limits: E6000,
      });
      await ok('keys', 'set-plan', ids.e600!, 'business');
      expect((await recordsOf(OWNER)).map((r) => [r.keyId, r.plan]).sort()).toEqual(
        [
          [ids.free, 'free'],
          [ids.pro, 'enterprise'],
          [ids.business, 'business'],
          [ids.e600, 'business'],
        ].sort(),
      );

      expect(await ok('keys', 'revoke', ids.free!)).toMatchObject({ status: 'revoked', alreadyRevoked: false });
      expect(await ok('keys', 'revoke', ids.free!)).toMatchObject({ status: 'revoked', alreadyRevoked: true });
      const old = (await recordsById(ids.pro!))[0]!;
      const rotated = await ok('keys', 'rotate', ids.pro!);
      expect(rotated.key).toMatch(/^ask2_/);
      const after = await recordsById(ids.pro!);
      expect(after).toHaveLength(1);
      expect(after[0]!.hash).not.toBe(old.hash);
      expect(after[0]).toMatchObject({ plan: 'enterprise', limits: E6000, status: 'active' });
      const refused = await admin('keys', 'rotate', ids.free!);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.err)).toMatchObject({ error: expect.stringMatching(/is revoked/) });

      const banned = await ok('keys', 'ban', ids.pro!, '--minutes', '10');
      expect(banned.adminBannedUntil).toEqual(expect.any(String));
      expect((await ok('keys', 'show', ids.pro!)).bannedUntil).toEqual(expect.any(String));
      expect(await ok('keys', 'usage', ids.pro!)).toMatchObject({ keyId: ids.pro });
      await ok('keys', 'unban', ids.pro!);
      expect(await ok('keys', 'show', ids.pro!)).toMatchObject({ bannedUntil: null });

      expect(await gatewayState(), 'nothing changed at API Gateway').toEqual(before);
    });

    it('lists keys by filter, page by page with the cursor it prints', async () => {
      // Every record and history entry the tool wrote already has its index's attributes.
      expect(await ok('keys', 'reindex')).toEqual({ updated: 0, historyUpdated: 0 });
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
      expect(enterprise.keys.map((k: { keyId: string }) => k.keyId)).toEqual([ids.pro]);
    });

    it("remove-release-api-keys deletes what release 3357b0c's tool made, reading the stack through CloudFormation's GetTemplate and ListStackResources", async () => {
      const template = (await localAssembly()).template;
      const standIn = await cloudFormationStandIn({ outputs: stage.outputs, template, resources: stage.resources });
      const restore = useEnv({ AWS_ENDPOINT_URL_CLOUDFORMATION: standIn.url });
      const gw = new APIGatewayClient(moto.config);
      try {
        const before = await gatewayState();
        // As 3357b0c's tool left them: paying keys' API keys on the Pro plan, an Enterprise key's usage plan of its own.
        const proPlan = stage.planIds.get('UsagePlanPro')!;
        const made: string[] = [];
        for (let i = 0; i < 2; i++) {
          const k = await gw.send(
            new CreateApiKeyCommand({
              name: `animal-store-key_old${i}`,
              value: `animalstoreold${i}${'0'.repeat(24)}`,
              enabled: true,
            }),
          );
          await gw.send(new CreateUsagePlanKeyCommand({ usagePlanId: proPlan, keyId: k.id!, keyType: 'API_KEY' }));
          made.push(k.id!);
        }
        const own = await gw.send(
          new CreateUsagePlanCommand({
            name: `animal-store-${STAGE}-enterprise-key_old9`,
            apiStages: [{ apiId: stage.apiId, stage: stage.stageName }],
          }),
        );
        const ownKey = await gw.send(
          new CreateApiKeyCommand({
            name: 'animal-store-key_old9',
            value: `animalstoreold9${'0'.repeat(24)}`,
            enabled: true,
          }),
        );
        await gw.send(new CreateUsagePlanKeyCommand({ usagePlanId: own.id!, keyId: ownKey.id!, keyType: 'API_KEY' }));

        const removed = await ok('keys', 'remove-release-api-keys');
        expect([...removed.deletedApiKeys].sort()).toEqual([...made, ownKey.id].sort());
        expect(removed.deletedUsagePlans).toEqual([own.id]);
        expect(await gatewayState(), "only the stack's plans and plan keys are left").toEqual(before);
        // Run again: nothing left. On moto, whose plan still lists the keys it deleted, it deletes them again and is
        // answered NotFoundException (done, for the command): on AWS it would find nothing.
        const again = await ok('keys', 'remove-release-api-keys');
        expect(again.deletedUsagePlans).toEqual([]);
        expect(made).toEqual(expect.arrayContaining(again.deletedApiKeys));
        expect(moto.takeErrors().sort()).toEqual(made.map((id) => `DELETE /apikeys/${id} 404`).sort());
      } finally {
        restore();
        gw.destroy();
        await standIn.close();
      }
    });
  },
);

/** One call's outcome: `ok`, or the error's name (a non-JSON 500 from moto is `500`). */
type Outcome = string;
const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    () => 'ok',
    (e: Error & { $metadata?: { httpStatusCode?: number } }) => (e.$metadata?.httpStatusCode === 500 ? '500' : e.name),
  );

/**
 * The same control-plane calls on the fake and on moto, on the same starting inventory (a usage plan on the stage,
 * an API key), each with what AWS documents ("Amazon API Gateway REST API Reference", the operation's
 * Errors): the fake must answer as AWS does; where moto does not, the row says so and why the tool does not depend on
 * it.
 */
describe.skipIf(!MOTO)(title('the control-plane fake beside moto, call by call'), () => {
  const VALUE = 'animalstoreparityprobekeyvalue0000000001';
  interface World {
    send: (c: object) => Promise<any>;
    planA: string;
    key: string;
  }
  const apiStage = { apiId: 'api123', stage: 'v1' };
  async function world(send: (c: object) => Promise<any>): Promise<World> {
    const plan = async (name: string) => (await send(new CreateUsagePlanCommand({ name, apiStages: [apiStage] }))).id;
    const planA = await plan('parity-a');
    const key = (await send(new CreateApiKeyCommand({ name: 'parity-key', value: VALUE, enabled: true }))).id;
    return { send, planA, key };
  }

  /** [what, AWS (and the fake), moto, the calls]: outcomes of the last call. */
  const PROBES: Array<[string, Outcome, Outcome, (w: World) => object[]]> = [
    [
      'DeleteApiKey of no key',
      'NotFoundException',
      'NotFoundException',
      () => [new DeleteApiKeyCommand({ apiKey: 'nokey' })],
    ],
    [
      'DeleteUsagePlanKey of a key on the plan',
      'ok',
      'ok',
      (w) => [
        new CreateUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key, keyType: 'API_KEY' }),
        new DeleteUsagePlanKeyCommand({ usagePlanId: w.planA, keyId: w.key }),
      ],
    ],
    // moto raises a Python KeyError (HTTP 500, an HTML page): the removal, which takes NotFoundException for done,
    // would fail there on a run after one whose answer was lost; AWS answers NotFoundException.
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
    // moto deletes it; AWS refuses a plan still associated with a stage, which is why the removal takes the stage off
    // first.
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

  /** What `run` answers on a fresh world of the fake, then on moto's (its inventory reset first). */
  async function onEach<T>(run: (w: World) => Promise<T>): Promise<T[]> {
    const fake = new FakeControlPlane(Date.UTC(2036, 0, 1));
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
    const seen: T[] = [];
    for (const send of senders(fake)) seen.push(await run(await world(send)));
    return seen;
  }

  it("UpdateUsagePlan takes the stage off a plan (the removal's first step), after which it is deleted", async () => {
    const seen = await onEach(async ({ send, planA }) => {
      await send(
        new UpdateUsagePlanCommand({
          usagePlanId: planA,
          patchOperations: [{ op: 'remove', path: '/apiStages', value: `${apiStage.apiId}:${apiStage.stage}` }],
        }),
      );
      const off = (await send(new GetUsagePlanCommand({ usagePlanId: planA }))).apiStages ?? [];
      await send(new DeleteUsagePlanCommand({ usagePlanId: planA }));
      return [off, await outcome(send(new GetUsagePlanCommand({ usagePlanId: planA })))];
    });
    expect(seen).toEqual([
      [[], 'NotFoundException'],
      [[], 'NotFoundException'],
    ]);
  });

  it('DeleteApiKey takes the key off its usage plans (AWS, the fake); moto goes on listing it there', async () => {
    const listed = await onEach(async ({ send, planA, key }) => {
      await send(new CreateUsagePlanKeyCommand({ usagePlanId: planA, keyId: key, keyType: 'API_KEY' }));
      await send(new DeleteApiKeyCommand({ apiKey: key }));
      return (await send(new GetUsagePlanKeysCommand({ usagePlanId: planA }))).items.length;
    });
    expect(listed).toEqual([0, 1]);
  });

  it('pages: neither the fake nor moto pages GetUsagePlans by `limit` (AWS does, with `position`)', async () => {
    const pages = await onEach(async ({ send }) => {
      await send(new CreateUsagePlanCommand({ name: 'parity-b', apiStages: [apiStage] }));
      const out = await send(new GetUsagePlansCommand({ limit: 1 }));
      return [out.items.length, out.position];
    });
    expect(pages).toEqual([
      [2, undefined],
      [2, undefined],
    ]);
  });
});
