/**
 * An Enterprise bracket's probation member is named by the authorizer only when the data says it exists: a bracket
 * made before probation members (or whose pool a failure left short of its probation member) keeps a key on probation
 * counted on its ordinary pool member, which API Gateway has, so the customer is served; once `keys reconcile` has
 * made the member and then recorded it, probation counts there.
 *
 * Over HTTP through the local gateway (the template's authorizer and its 60 s cache), with the admin tool on the fake
 * of API Gateway's control plane (test/helpers/control-plane-fake.ts) and the API's tables. API Gateway's bracket
 * plans are what the admin tool made at the fake, so the local gateway's view of an Enterprise usage key is the
 * fake's: a key the fake has on no usage plan is refused 403, as API Gateway refuses it.
 *
 * The previous release's authorizer (key layout 1) never names a bracket's probation member (an Enterprise key then
 * had an API key of its own, and probation moved only pool members), so a rollback to it leaves nothing here to
 * name (the last test runs its code, test/fixtures/key-layout-1); the record it leaves behind is read by no one until
 * this release is deployed again.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enterpriseBracket } from '../../contract/brackets.ts';
import { BRACKET_POOL, poolValueOf } from '../../contract/key-pool.ts';
import { probationValueOf } from '../../contract/probation.ts';
import { hashKey, usableKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { bracketProbationItemKey, probationUsageKey } from '../../lambdas/storage/bracket-probation.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { legacyKey } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { STAGE, controlPlaneWorld, type World } from '../helpers/control-plane-world.ts';

const E600 = { perMinute: 600, perDay: 50_000 };
const caller = { plan: 'enterprise', ...E600 };

let api: TestApi;
let local: AdminDeps;
beforeAll(async () => {
  // The template's authorizer cache (60 s): a decision is cached as in AWS, and the test moves the clock past it.
  ({ api, deps: local } = await startLocalAdmin({ devKeys: [], authCacheTtlSeconds: undefined }));
}, 240_000);
afterAll(() => api?.close());

/** The local gateway takes an Enterprise usage key only if the fake has it on a usage plan, as API Gateway would. */
function gatewayIsTheFake(w: World): void {
  const planFor = api.usage.planFor.bind(api.usage);
  const onPlan = (value: string) =>
    [...w.fake.keys.values()].some((k) => k.value === value && w.fake.plansOf(k.id).length > 0);
  api.usage.planFor = (apiKey, who) =>
    who.plan === 'enterprise' && !onPlan(apiKey) ? undefined : planFor(apiKey, who);
}

it('a key of a bracket without its probation member is served on its pool member while on probation; after keys reconcile, probation counts on the member', async () => {
  const w = controlPlaneWorld(local);
  const keysStage = [...api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean);
  expect(keysStage, "the admin world's stage is the one the authorizer names keys for").toBe(STAGE);
  api.clock.set(() => w.fake.now());
  gatewayIsTheFake(w);

  const { key, record } = await w.admin.create({ owner: w.owner, plan: 'enterprise', ...E600 });
  const named = { keyId: record.keyId, plan: 'enterprise' as const, limits: E600 };
  const member = poolValueOf(named, STAGE);
  const probation = probationValueOf(named, STAGE);
  const bracket = enterpriseBracket(E600).id;

  // The bracket as an admin tool from before probation members left it: its mapped members, no probation member and
  // no record of one.
  const m4 = [...w.fake.keys.values()].find((k) => k.name.endsWith(`-m${BRACKET_POOL.members}`))!;
  w.fake.keys.delete(m4.id);
  for (const p of w.fake.plans.values()) p.keys.delete(m4.id);
  await api.storage.doc.send(
    new DeleteCommand({ TableName: api.storage.tables.state, Key: bracketProbationItemKey(bracket) }),
  );
  expect(api.usage.planFor(probation, caller), 'API Gateway has no probation member: naming it is a 403').toBe(
    undefined,
  );

  // Banned, and the ban ended 10 minutes ago: on probation at the gateway.
  const nowSec = () => Math.floor(w.fake.now() / 1000);
  await noteStanding(api.storage, hashKey(key), { bannedUntil: nowSec() - 600 });
  const first = await api.call('/pets?limit=1', { key });
  expect(first.status, await first.clone().text()).toBe(200);
  expect(api.usage.used(member, caller), 'counted on its ordinary pool member').toBe(1);
  // An admin is told the same: where the gateway counts the key, and the one command that changes it.
  const shown = await runLocalAdmin(w.deps, 'keys', 'show', record.keyId);
  expect(shown.out).toMatch(/probation member is not recorded yet \(`keys reconcile --all` makes and records it\)/);

  // The sweep makes the member, then records it.
  const sweep = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
  expect(sweep.code, sweep.err).toBe(0);
  expect(sweep.out).toMatch(/made pool member \S+-m4/);
  expect(sweep.out).toMatch(new RegExp(`record of bracket ${bracket}'s probation member`));
  // Run again, it finds both done.
  const again = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
  expect(again.code, again.err).toBe(0);
  expect(again.out).not.toMatch(/probation member/);

  // Past the cached decision: the authorizer now names the probation member, which API Gateway has.
  w.fake.t += 61_000;
  const second = await api.call('/pets?limit=1', { key });
  expect(second.status, await second.clone().text()).toBe(200);
  expect(api.usage.used(probation, caller), 'counted on the probation member').toBe(1);
  expect(api.usage.used(member, caller), 'not on its pool member').toBe(1);
  expect((await runLocalAdmin(w.deps, 'keys', 'show', record.keyId)).out).toMatch(
    new RegExp(`the probation member of Enterprise bracket ${bracket}`),
  );
}, 120_000);

it('a record the authorizer cannot read keeps the key on its pool member, never a 403 or a 503', async () => {
  const w = controlPlaneWorld(local);
  const { record } = await w.admin.create({ owner: w.owner, plan: 'enterprise', ...E600 });
  const stored = (await w.plain.store.getById(record.keyId)) as KeyRecord;
  const auth = usableKey(stored, STAGE)!;
  // The record is there (the create made the bracket's pool and recorded its probation member).
  expect(await probationUsageKey(api.storage, auth, 'probation', STAGE)).toBe(
    probationValueOf({ keyId: auth.keyId, plan: 'enterprise', limits: E600 }, STAGE),
  );
  // A state table DynamoDB does not answer for (ResourceNotFoundException here): the ordinary member.
  const unreadable = { ...api.storage, tables: { ...api.storage.tables, state: 'no-such-table' } };
  expect(await probationUsageKey(unreadable, auth, 'probation', STAGE)).toBe(auth.usageIdentifierKey);
  // Nothing else changes: a key not on probation is counted on its member without a read.
  expect(await probationUsageKey(unreadable, auth, 'count', STAGE)).toBe(auth.usageIdentifierKey);
});

it("the previous release's authorizer (3357b0c) names no bracket probation member: a rollback to it meets none missing", async () => {
  const w = controlPlaneWorld(local);
  // An Enterprise key as that release's tool left it (an API key of its own), on probation.
  const id = await legacyKey(w, 'enterprise', E600);
  const stored = (await w.plain.store.getById(id)) as KeyRecord;
  const dir = mkdtempSync(join(tmpdir(), 'release-3357b0c-'));
  try {
    execFileSync('tar', ['-xzf', 'test/fixtures/key-layout-1/authorizer-code.tar.gz', '-C', dir]);
    const old = (await import(join(dir, 'lambdas/domain/keys.ts'))) as typeof import('../../lambdas/domain/keys.ts');
    const auth = old.usableKey(stored, STAGE)!;
    // Its own API key, whatever the standing: the bracket's members, and their record, are nothing it reads.
    expect(old.gateUsageKey(auth, 'probation', STAGE)).toBe(old.usageIdentifierKey(id));
    // This release names the same own key for it until the sweep after the deploy moves it into its bracket.
    expect(await probationUsageKey(api.storage, usableKey(stored, STAGE)!, 'probation', STAGE)).toBe(
      old.usageIdentifierKey(id),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
