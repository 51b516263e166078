/**
 * The upgrade from the last release, 3357b0c, through the intermediate release plan-keys-1 (test/fixtures/releases),
 * with customers' requests every few seconds throughout: the stage as 3357b0c's admin tool left it (Free keys on its
 * Free pool, paying keys on API keys of their own, an Enterprise key on a usage plan of its own, a key on probation,
 * a spent key, a banned and a revoked key) on DynamoDB Local; each deploy as CloudFormation runs it, its authorizer
 * canary and a rollback at each step; the admin commands an operator runs at each step; then the removal of what
 * 3357b0c's tool made. No active key ever gets 401 or 403 (test/helpers/upgrade-stage.ts models API Gateway's and
 * CloudFormation's side). What preflight refuses (this release straight over 3357b0c) and a walk-back after the
 * removal are run too: the model answers 403 there, which is why they are refused or ruled out.
 */
import { readFileSync } from 'node:fs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_NAMES, PLANS, planUsageKeyValue, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { checkKeysOf } from '../../lambdas/hooks/check-keys.ts';
import { noteStanding, readKeyAndStanding } from '../../lambdas/storage/standing.ts';
import { runAdmin } from '../../lib/admin/cli.ts';
import { pacedControlPlane } from '../../lib/admin/release-api-keys.ts';
import type { AdminDeps, CheckKeySecretPort } from '../../lib/admin/ports.ts';
import { keyAdmin } from '../../lib/admin/service.ts';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { OUTPUT_IDS, USAGE_KEYS_PER_PLAN } from '../../lib/stacks/outputs.ts';
import { synthTemplates } from '../infra/templates.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import { bannedKey, spentKey } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { FakeControlPlane } from '../helpers/control-plane-fake.ts';
import { API, STAGE, WORLD_START_MS, controlPlaneWorld, type World } from '../helpers/control-plane-world.ts';
import {
  CACHE_TTL_MS,
  StackModel,
  StageTraffic,
  currentAuthorizer,
  loadReleasedNaming,
  onStage,
  releasedAuthorizer,
  releasedTemplate,
  update,
  type Answer,
  type Release,
  type ReleasedNaming,
  type RollbackAt,
} from '../helpers/upgrade-stage.ts';

let api: TestApi;
let local: AdminDeps;
let naming: ReleasedNaming;
let closeNaming: (() => void) | undefined;
let r3357b0c: Release;
let planKeys1: Release;
let thisRelease: Release;
beforeAll(async () => {
  ({ api, deps: local } = await startLocalAdmin());
  const loaded = await loadReleasedNaming();
  ({ naming } = loaded);
  closeNaming = loaded.close;
  const released = releasedAuthorizer(naming);
  r3357b0c = { name: '3357b0c', template: releasedTemplate('3357b0c'), authorizer: released };
  // Its authorizer is 3357b0c's code: the same version, so its deploy shifts nothing.
  planKeys1 = { name: 'plan-keys-1', template: releasedTemplate('plan-keys-1'), authorizer: released };
  thisRelease = {
    name: 'this release',
    template: synthTemplates()[STAGE] as CfnTemplate,
    authorizer: currentAuthorizer,
  };
}, 240_000);
afterAll(() => {
  api?.close();
  closeNaming?.();
});

/** Secrets Manager in memory: where `keys issue-check-key` stores the check keys, and the hook reads them. */
class MemorySecrets implements CheckKeySecretPort {
  readonly values = new Map<string, string>();
  async read(name: string) {
    return this.values.get(name);
  }
  async write(name: string, value: string) {
    this.values.set(name, value);
  }
}

const E600 = { perMinute: 600, perDay: 50_000 };
const MINUTE = 60_000;
const REMOVE = ['keys', 'remove-release-api-keys'];

interface Run {
  readonly w: World;
  readonly stack: StackModel;
  readonly traffic: StageTraffic;
  readonly secrets: MemorySecrets;
  readonly deps: AdminDeps;
  /** What 3357b0c's tool made at the gateway: what the removal deletes besides what the stack let go of. */
  readonly own: { apiKeys: string[]; usagePlans: string[] };
  /** The deploys and admin commands run, in order, as an operator types them. */
  readonly ran: string[];
  /** What each `keys issue-check-key` did, and what the pre-traffic check's direct call of the authorizer got. */
  readonly checkKey: string[];
  readonly hook: string[];
  /** Paying keys the tool refused while 3357b0c's authorizer could answer. */
  paidRefused: number;
}

/** A stage at release 3357b0c, its keys as 3357b0c's tool left them, every customer sending requests. */
async function stageAt3357b0c(): Promise<Run> {
  const w = controlPlaneWorld(local);
  // The world's fake holds this release's stack; this stage starts at 3357b0c's, which the stack model makes.
  w.fake.keys.clear();
  w.fake.plans.clear();
  const stack = new StackModel(w.fake, r3357b0c);
  const traffic = new StageTraffic(w.fake, stack, w.plain.storage!);
  const secrets = new MemorySecrets();
  // The removal's calls go to the fake at its pace (each run its own client), customers' requests flowing between.
  const gateway = { send: async (command: object) => (await traffic.catchUp(), w.fake.send(command)) };
  const deps: AdminDeps = {
    ...w.plain,
    secrets,
    controlPlane: async () => ({
      stack: async () => stack.view(),
      gateway: pacedControlPlane(gateway, w.fake),
      cacheTtlMs: CACHE_TTL_MS,
    }),
  };
  const r: Run = {
    w,
    stack,
    traffic,
    secrets,
    deps,
    own: { apiKeys: [], usagePlans: [] },
    ran: [],
    checkKey: [],
    hook: [],
    paidRefused: 0,
  };
  const nowSec = Math.floor(w.fake.now() / 1000);
  await customer(r, 'Free on the pool', 'free');
  await customer(r, 'Free with an API key of its own', 'free', { own: true });
  const probation = await customer(r, 'Free on probation', 'free');
  await noteStanding(w.plain.storage!, probation.hash, { bannedUntil: nowSec - 600 });
  await customer(r, 'Pro', 'pro', { own: true });
  await customer(r, 'Business', 'business', { own: true });
  await customer(r, 'Enterprise', 'enterprise', { own: true, limits: E600 });
  await spentKey(w, (await customer(r, 'Pro, its day spent', 'pro', { own: true })).keyId);
  await bannedKey(w, (await customer(r, 'Business, banned', 'business', { own: true })).keyId);
  const revoked = await customer(r, 'Pro, revoked', 'pro', { own: true, active: false });
  await w.admin.revoke(revoked.keyId);
  // What 3357b0c's authorizer names for them: the records are shaped as its tool left them.
  const value = (id: string) => r3357b0c.template.Resources[id]!.Properties!.Value;
  const allow = (usageKey: unknown) => ({ kind: 'allow', usageKey });
  expect(await named(r, r3357b0c, 'Free on the pool')).toEqual(
    allow(expect.stringMatching(/^animalstorefreepoolmemberstaging\d{4}$/)),
  );
  expect(await named(r, r3357b0c, 'Free on probation')).toEqual(allow(value('FreePoolProbationKey')));
  expect(await named(r, r3357b0c, 'Pro, its day spent')).toEqual(allow(value('SpentDayQuotaKey')));
  expect(await named(r, r3357b0c, 'Business, banned')).toEqual({ kind: 'deny' });
  expect(await named(r, r3357b0c, 'Pro, revoked')).toEqual({ kind: 'unauthorized' });
  for (const label of ['Free with an API key of its own', 'Pro', 'Business', 'Enterprise'])
    expect(await named(r, r3357b0c, label)).toEqual(allow(expect.stringMatching(/^animalstore[0-9a-f]{32}$/)));
  return r;
}

/** What `release`'s authorizer answers the caller's key now. */
async function named(r: Run, release: Release, label: string): Promise<Answer> {
  const caller = r.traffic.callers.find((c) => c.label === label)!;
  const found = await readKeyAndStanding(r.w.plain.storage!, hashKey(caller.secret));
  return release.authorizer.answer(found.record, found.standing, Math.floor(r.w.fake.now() / 1000));
}

/**
 * A customer's key, made with the admin service; `own`: with what 3357b0c's tool gave it, an API key of its own
 * (value: 3357b0c's usageIdentifierKey) on its plan's usage plan, an Enterprise key's on a usage plan of its own, and
 * the record's apiGatewayKeyId (and usagePlanId), which this release's tool ignores.
 */
async function customer(
  r: Run,
  label: string,
  plan: PlanName,
  o: { own?: boolean; limits?: PlanLimits; active?: boolean } = {},
): Promise<{ keyId: string; hash: string }> {
  const { w, stack, own } = r;
  // Several customers share the world's owner, some on one plan: each is a key of its own (`another`).
  const { key, record: created } = await w.admin.create({ owner: w.owner, plan, ...(o.limits ?? {}), another: true });
  const record = { keyId: created.keyId, hash: hashKey(key) };
  if (o.own) {
    const apiKey = w.fake.seedKey(`animal-store-${record.keyId}`, naming.usageIdentifierKey(record.keyId));
    const ownPlan =
      plan === 'enterprise'
        ? w.fake.seedPlan(`animal-store-${STAGE}-enterprise-${record.keyId}`, [{ ...API }])
        : undefined;
    w.fake.plans.get(ownPlan ?? stack.physical.get(`UsagePlan${PLANS[plan].displayName}`)!)!.keys.add(apiKey);
    own.apiKeys.push(apiKey);
    if (ownPlan) own.usagePlans.push(ownPlan);
    const storage = w.plain.storage!;
    await storage.doc.send(
      new UpdateCommand({
        TableName: storage.tables.keys,
        Key: { hash: record.hash },
        UpdateExpression: `SET apiGatewayKeyId = :k${ownPlan ? ', usagePlanId = :p' : ''}`,
        ExpressionAttributeValues: { ':k': apiKey, ...(ownPlan ? { ':p': ownPlan } : {}) },
      }),
    );
  }
  r.traffic.callers.push({ label, secret: key, active: o.active ?? true });
  return record;
}

/** An admin command on the stage, as the operator runs it (`npm run admin -- …`). */
async function admin(r: Run, args: string[], said = args.join(' ')) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    [...args, '--stage', STAGE],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    // The UsageKeys output of the release the stack last completed: CloudFormation updates outputs at completion.
    async () => ({ ...r.deps, ownKeyAuthorizer: ownKeyAuthorizer(r) }),
  );
  r.ran.push(`npm run admin -- ${said} --stage ${STAGE}`);
  return { code, out: out.join('\n'), err };
}

/** `keys issue-check-key`: it succeeds; what it did is kept. */
async function issueCheckKey(r: Run) {
  const { code, out, err } = await admin(r, ['keys', 'issue-check-key', '--json'], 'keys issue-check-key');
  expect(code, err.join('\n')).toBe(0);
  r.checkKey.push((JSON.parse(out) as { did: string }).did);
}

/**
 * A Free key made with this release's tool, sending requests from now on. The test's one customer gets a key at every
 * step, minutes apart: `--another` (else a create within 15 minutes of its last is taken for a rerun); the recorded
 * step is the operator's create for a customer.
 */
async function newFreeKey(r: Run, when: string) {
  const { code, out, err } = await admin(
    r,
    ['keys', 'create', '--owner', r.w.owner, '--plan', 'free', '--another', '--json'],
    'keys create --owner <customer> --plan free',
  );
  expect(code, err.join('\n')).toBe(0);
  if (ownKeyAuthorizer(r)) await paidKeyWaits(r);
  r.traffic.callers.push({
    label: `Free, made ${when}`,
    secret: (JSON.parse(out) as { key: string }).key,
    active: true,
  });
}

/** Whether the stack's outputs say its authorizer is 3357b0c's: no UsageKeys output. */
const ownKeyAuthorizer = (r: Run) =>
  r.stack.release.template.Outputs?.[OUTPUT_IDS.usageKeys]?.Value !== USAGE_KEYS_PER_PLAN;

/** A paying key asked for while 3357b0c's authorizer may answer: refused, nothing written. */
async function paidKeyWaits(r: Run) {
  const { code, err } = await admin(r, ['keys', 'create', '--owner', r.w.owner, '--plan', 'pro']);
  r.ran.pop();
  expect(code).toBe(1);
  expect(err.at(-1)).toMatch(
    /^error: a pro key waits for a deploy: the staging stack runs release 3357b0c's authorizer/,
  );
  r.paidRefused++;
}

/** The removal run before it may: refused, nothing called at API Gateway. */
async function removalRefused(r: Run, why: RegExp) {
  const calls = r.w.fake.calls.length;
  const { code, err } = await admin(r, REMOVE);
  r.ran.pop();
  expect(code).toBe(1);
  expect(err.at(-1)).toMatch(why);
  expect(r.w.fake.calls.length).toBe(calls);
}

/** A settled step: traffic, the check key issued, a Free key made, the removal refused (with `removal`) or not run. */
async function settled(r: Run, step: string, removal?: RegExp) {
  r.traffic.phase = step;
  await r.traffic.advance(MINUTE);
  await issueCheckKey(r);
  await newFreeKey(r, `at ${step}`);
  if (removal) await removalRefused(r, removal);
  await r.traffic.advance(2 * MINUTE);
}

/**
 * The pre-traffic check: the new version invoked directly with each plan's check key stored in the secret, and
 * allowed onto that plan's usage key.
 */
const preTrafficCheck = (r: Run) => async (to: Release) => {
  const secret = r.secrets.values.get(checkKeySecretName(STAGE));
  if (!secret) return false;
  const { byPlan, missing } = checkKeysOf(secret);
  if (missing.length) return (r.hook.push(`${to.name}: no key of ${missing.join(', ')}`), false);
  let allowed = true;
  for (const plan of PLAN_NAMES) {
    const found = await readKeyAndStanding(r.w.plain.storage!, hashKey(byPlan[plan]!));
    const answer = to.authorizer.answer(found.record, found.standing, Math.floor(r.w.fake.now() / 1000));
    const onPlan = answer.kind === 'allow' && answer.usageKey === planUsageKeyValue(STAGE, plan);
    r.hook.push(
      `${to.name}: ${plan} ${answer.kind}${answer.kind !== 'allow' || onPlan ? '' : ` onto ${answer.usageKey}`}`,
    );
    allowed &&= onPlan;
  }
  return allowed;
};

/** `cdk deploy` of `to`, rolled back first where asked, then again to UPDATE_COMPLETE. */
async function deploy(r: Run, to: Release, rollbackAt?: RollbackAt) {
  const options = {
    beforeTraffic: preTrafficCheck(r),
    inCanary: async () => {
      await issueCheckKey(r);
      await newFreeKey(r, `in ${to.name}'s canary`);
      await removalRefused(r, /is UPDATE_IN_PROGRESS, not settled/);
    },
  };
  const command = `deploy ${to.name} (npx cdk deploy ${r.stack.view().name}, from its checkout)`;
  if (rollbackAt) {
    r.ran.push(command);
    expect(await update(r.stack, r.traffic, to, { ...options, rollbackAt })).toEqual({
      status: 'UPDATE_ROLLBACK_COMPLETE',
    });
    // Rolled back to 3357b0c (no plan keys) or plan-keys-1 (still 3357b0c's Free pool).
    await removalRefused(r, /has no API key of plan|still has release 3357b0c's UsagePlanFreePool/);
    await r.traffic.advance(MINUTE);
  }
  r.ran.push(command);
  expect(await update(r.stack, r.traffic, to, options)).toEqual({ status: 'UPDATE_COMPLETE' });
}

/** The removal: exactly what 3357b0c's tool made and the stack let go of is deleted; again, nothing is left. */
async function removal(r: Run) {
  const { w, stack, own } = r;
  const { code, out, err } = await admin(r, [...REMOVE, '--json'], REMOVE.join(' '));
  expect(code, err.join('\n')).toBe(0);
  const removed = JSON.parse(out) as Record<string, string[]>;
  const sorted = (ids: readonly string[]) => [...ids].sort();
  expect(sorted(removed.deletedApiKeys!)).toEqual(sorted([...own.apiKeys, ...stack.letGo.apiKeys]));
  expect(sorted(removed.deletedUsagePlans!)).toEqual(sorted([...own.usagePlans, ...stack.letGo.usagePlans]));
  expect([removed.detachedApiKeys, removed.leftUsagePlans]).toEqual([[], []]);
  expect(accountInventory(w.fake)).toEqual(stackInventory(stack));
  await r.traffic.advance(MINUTE);
  const writes = w.fake.calls.filter((c) => !c.op.startsWith('Get')).length;
  const again = await admin(r, REMOVE);
  expect(again.out).toMatch(/nothing release 3357b0c.* made is left on the stage/);
  expect(w.fake.calls.filter((c) => !c.op.startsWith('Get')).length).toBe(writes);
}

/** Every usage plan and API key of the account, each plan with its keys. */
const accountInventory = (fake: FakeControlPlane) => ({
  apiKeys: [...fake.keys.keys()].sort(),
  usagePlans: [...fake.plans.values()].map((p) => `${p.id}: ${[...p.keys].sort().join(' ')}`).sort(),
});

/** What this release's stack holds: each plan's usage plan with its one API key. */
function stackInventory(stack: StackModel) {
  const id = (logical: string) => stack.physical.get(logical)!;
  const names = PLAN_NAMES.map((p) => PLANS[p].displayName);
  return {
    apiKeys: names.map((n) => id(`PlanKey${n}`)).sort(),
    usagePlans: names.map((n) => `${id(`UsagePlan${n}`)}: ${id(`PlanKey${n}`)}`).sort(),
  };
}

interface Variant {
  readonly planKeys1?: RollbackAt;
  readonly thisRelease?: RollbackAt;
  /** plan-keys-1 deployed again over this release before the removal. */
  readonly walkBack?: boolean;
}

/** The upgrade as the docs order it, from 3357b0c to the removal's second run. */
async function upgrade(r: Run, v: Variant) {
  await settled(r, '3357b0c', /has no API key of plan free, pro, business, enterprise in its deployed template/);
  await deploy(r, planKeys1, v.planKeys1);
  await settled(r, 'plan-keys-1', /still has release 3357b0c's UsagePlanFreePool/);
  expect(updateFindings(planKeys1.template, thisRelease.template, undefined, STAGE)).toEqual([]);
  r.ran.push(`npm run preflight -- --stage ${STAGE}`);
  await deploy(r, thisRelease, v.thisRelease);
  // Settled, but answers cached before the alias's last shift may still name what it deletes.
  await removalRefused(r, /changed at .*: an authorizer answer cached before then may name what this deletes/);
  await settled(r, 'this release');
  // Paying keys are made again once this release's authorizer alone answers: it names their plan's key.
  const { code, out } = await admin(
    r,
    ['keys', 'create', '--owner', r.w.owner, '--plan', 'pro', '--another', '--json'],
    'keys create --owner <customer> --plan pro',
  );
  expect(code).toBe(0);
  r.traffic.callers.push({
    label: 'Pro, made at this release',
    secret: (JSON.parse(out) as { key: string }).key,
    active: true,
  });
  // 3357b0c listed revoked keys waiting for its purge apart: `keys list --status revoked` finds them once re-listed.
  const reindexed = await admin(r, ['keys', 'reindex'], 'keys reindex');
  expect(reindexed.code, reindexed.err.join('\n')).toBe(0);
  if (v.walkBack) await walkBack(r);
  await removal(r);
  await settled(r, 'the removal');
}

/**
 * plan-keys-1 deployed over this release again, before the removal: it would make 3357b0c's Free pool again, whose
 * API keys' values the retained ones still hold, so CloudFormation fails on the first and rolls back before any
 * shift. The usage plans it made before that are retained (its DeletionPolicy) and on the stage: the removal deletes
 * them too: the rolled-back stack runs this release's template, settled.
 */
async function walkBack(r: Run) {
  r.ran.push(`deploy ${planKeys1.name} (npx cdk deploy ${r.stack.view().name}, from its checkout)`);
  expect(await update(r.stack, r.traffic, planKeys1, { beforeTraffic: preTrafficCheck(r) })).toEqual({
    status: 'UPDATE_ROLLBACK_COMPLETE',
    failure: 'FreePoolMember0000: API Key already exists (ConflictException)',
  });
  expect(r.stack.release).toBe(thisRelease);
  // Had it shifted, 3357b0c's authorizer would name, for a paying key made since, an API key of its own: none.
  const answer = await named(r, planKeys1, 'Pro, made at this release');
  expect(answer).toEqual({ kind: 'allow', usageKey: expect.stringMatching(/^animalstore[0-9a-f]{32}$/) });
  expect(onStage(r.w.fake, (answer as { usageKey: string }).usageKey)).toBe(false);
  await r.traffic.advance(2 * MINUTE);
}

/** The commands of docs/deployment.md's upgrade section, but the checkout of plan-keys-1. */
function documentedUpgrade(): string[] {
  const doc = readFileSync('docs/deployment.md', 'utf8');
  const block = /<!-- upgrade-commands -->\n```sh\n([\s\S]*?)```\n<!-- \/upgrade-commands -->/.exec(doc)?.[1] ?? '';
  return block
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('git worktree'));
}

/** The upgrade's own steps of what the test ran, each once, as an operator types them (keys made along the way aside). */
function operatorSteps(ran: readonly string[]): string[] {
  const typed = ran
    .filter((l) => !l.includes(' keys create '))
    .map((l) =>
      l.replace(/^deploy (.+?) \(npx cdk deploy (\S+), from its checkout\)$/, (_, release: string, stack: string) =>
        release === planKeys1.name ? `(cd /tmp/plan-keys-1 && npx cdk deploy ${stack})` : `npx cdk deploy ${stack}`,
      ),
    );
  return [...new Set(typed)];
}

/** What every variant shows: no wrong answer, both versions and every kind of answer, the check key throughout. */
function upgraded(r: Run) {
  const { traffic } = r;
  expect(traffic.wrong).toEqual([]);
  expect(traffic.answeredBy.get('3357b0c')).toBeGreaterThan(0);
  expect(traffic.answeredBy.get('this release')).toBeGreaterThan(0);
  expect(traffic.counts.served).toBeGreaterThan(1_000);
  expect(traffic.counts.denied).toBeGreaterThan(0);
  // The revoked key's.
  expect(traffic.counts['401']).toBeGreaterThan(0);
  // Issued at every step (made once, then found in place), and each plan's let through onto its plan's usage key by
  // the hook's direct call each time.
  expect(r.checkKey[0]).toMatch(/^(created|rotated)$/);
  expect(new Set(r.checkKey.slice(1))).toEqual(new Set(['nothing']));
  expect(r.hook.length).toBeGreaterThan(0);
  // At 3357b0c, at plan-keys-1 and in this release's canary.
  expect(r.paidRefused).toBeGreaterThanOrEqual(3);
  expect(new Set(r.hook)).toEqual(new Set(PLAN_NAMES.map((p) => `this release: ${p} allow`)));
}

describe('the upgrade from 3357b0c: no active key gets 401 or 403 at any request', () => {
  it('each deploy settling: exactly these commands; after the removal, a walk-back would 403 the paying keys', async () => {
    const r = await stageAt3357b0c();
    await upgrade(r, {});
    upgraded(r);
    const deployOf = (release: string) => `deploy ${release} (npx cdk deploy AnimalStore-${STAGE}, from its checkout)`;
    const step = [
      `npm run admin -- keys issue-check-key --stage ${STAGE}`,
      `npm run admin -- keys create --owner <customer> --plan free --stage ${STAGE}`,
    ];
    expect(r.ran).toEqual([
      ...step,
      deployOf('plan-keys-1'),
      ...step,
      `npm run preflight -- --stage ${STAGE}`,
      deployOf('this release'),
      // In its canary.
      ...step,
      ...step,
      `npm run admin -- keys create --owner <customer> --plan pro --stage ${STAGE}`,
      `npm run admin -- keys reindex --stage ${STAGE}`,
      `npm run admin -- keys remove-release-api-keys --stage ${STAGE}`,
      `npm run admin -- keys remove-release-api-keys --stage ${STAGE}`,
      ...step,
    ]);

    // The upgrade section of docs/deployment.md lists these, each once, besides checking out plan-keys-1.
    expect(documentedUpgrade()).toEqual(operatorSteps(r.ran));

    // plan-keys-1 again now (its Free pool can be made again) names, for every paying key, an API key of its own,
    // which the removal deleted: 403. Roll forward only.
    expect(await update(r.stack, r.traffic, planKeys1)).toEqual({ status: 'UPDATE_COMPLETE' });
    await r.traffic.advance(2 * MINUTE);
    const refused = new Set(r.traffic.wrong.map((l) => l.replace(/ 403 at .*/, '')));
    expect([...refused].sort()).toEqual(
      [
        'Business',
        'Business, banned',
        'Enterprise',
        'Free with an API key of its own',
        'Pro',
        'Pro, made at this release',
      ].sort(),
    );
  });

  const variants: Array<[string, Variant]> = [
    ['plan-keys-1 rolled back once', { planKeys1: 'before the shift' }],
    ['this release rolled back before the shift', { thisRelease: 'before the shift' }],
    ['this release rolled back in its canary', { thisRelease: 'in the canary' }],
    ['this release rolled back after the shift', { thisRelease: 'after the shift' }],
    ['plan-keys-1 deployed over this release again before the removal', { walkBack: true }],
  ];
  it.each(variants)('%s', async (_name, variant) => {
    const r = await stageAt3357b0c();
    await upgrade(r, variant);
    upgraded(r);
  });
});

describe('this release straight over 3357b0c', () => {
  it('is refused by preflight: deployed anyway, keys 3357b0c named a pool, probation or spent-day key for get 403 after its cleanup', async () => {
    expect(updateFindings(r3357b0c.template, thisRelease.template, undefined, STAGE)).toContainEqual(
      expect.stringMatching(
        /^update: the deployed stack lacks the plan API keys \(free, pro, business, enterprise\).*deploy release plan-keys-1/,
      ),
    );
    const r = await stageAt3357b0c();
    r.traffic.phase = '3357b0c';
    await r.traffic.advance(MINUTE);
    expect(await update(r.stack, r.traffic, thisRelease)).toEqual({ status: 'UPDATE_COMPLETE' });
    await r.traffic.advance(MINUTE);
    const refused = r.traffic.wrong.filter((l) => / 403 at .*this release: (cleaning up|complete)/.test(l));
    expect(refused.length).toBe(r.traffic.wrong.length);
    expect(new Set(r.traffic.wrong.map((l) => l.replace(/ 403 at .*/, '')))).toEqual(
      new Set(['Free on the pool', 'Free on probation', 'Pro, its day spent']),
    );
  });
});

describe('keys remove-release-api-keys, failing at each of its calls', () => {
  /** A stage's gateway after this release settled over plan-keys-1, with what 3357b0c's tool made (no records). */
  async function settledGateway() {
    const fake = new FakeControlPlane(WORLD_START_MS);
    const stack = new StackModel(fake, r3357b0c);
    const traffic = new StageTraffic(fake, stack, local.storage!);
    for (const [i, plan] of (['pro', 'business', 'enterprise'] as const).entries()) {
      const ownPlan = plan === 'enterprise' ? fake.seedPlan(`animal-store-${STAGE}-enterprise-key_${i}`) : undefined;
      fake.seedKey(`animal-store-key_${i}`, naming.usageIdentifierKey(`key_${i}`), [
        ownPlan ?? stack.physical.get(`UsagePlan${PLANS[plan].displayName}`)!,
      ]);
    }
    expect(await update(stack, traffic, planKeys1)).toEqual({ status: 'UPDATE_COMPLETE' });
    expect(await update(stack, traffic, thisRelease)).toEqual({ status: 'UPDATE_COMPLETE' });
    // Past the cache TTL after the shift, when the removal goes ahead.
    await traffic.advance(2 * MINUTE);
    const deps: AdminDeps = {
      ...local,
      stage: STAGE,
      now: fake.now,
      controlPlane: async () => ({
        stack: async () => stack.view(),
        gateway: pacedControlPlane(fake, fake),
        cacheTtlMs: CACHE_TTL_MS,
      }),
    };
    return { fake, stack, admin: keyAdmin(deps) };
  }

  // A run stopped between taking a usage plan off the stage and deleting it leaves it on no stage, where only its
  // name says whose it was: 3357b0c's tool named its own `animal-store-<stage>-…`, its stack `AnimalStore-<stage>-…`.
  it("a rerun after a fault at any call leaves the account with the stack's usage plans and API keys alone", async () => {
    const clean = await settledGateway();
    await clean.admin.removeReleaseApiKeys();
    const calls = clean.fake.calls.length;
    expect(calls).toBeGreaterThan(70);
    expect(accountInventory(clean.fake)).toEqual(stackInventory(clean.stack));
    const left: string[] = [];
    for (const mode of ['refused', 'lost'] as const)
      for (let n = 1; n <= calls; n++) {
        const g = await settledGateway();
        g.fake.failAt(n, mode);
        await g.admin.removeReleaseApiKeys().catch(() => {});
        const at = `${mode} at call ${n} (${g.fake.calls[n - 1]?.op})`;
        await g.admin
          .removeReleaseApiKeys()
          .catch((err: Error) => left.push(`${at}: the rerun failed: ${err.message}`));
        const stays = new Set(g.stack.view().resources.map((x) => x.physicalId));
        const extra = [
          ...[...g.fake.plans.values()].filter((p) => !stays.has(p.id)).map((p) => `usage plan ${p.name}`),
          ...[...g.fake.keys.values()].filter((k) => !stays.has(k.id)).map((k) => `API key ${k.name}`),
        ];
        if (extra.length) left.push(`${at}: the rerun left ${extra.join(', ')}`);
        else expect(accountInventory(g.fake), at).toEqual(stackInventory(g.stack));
      }
    expect(left).toEqual([]);
  });
});
