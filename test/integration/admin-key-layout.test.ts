/**
 * The upgrade from the last release, as an admin meets it: the stage runs 3357b0c (its authorizer's own code, kept in
 * test/fixtures/key-layout-1: `lambdas/domain/keys.ts` and the contract it imports, which is all its handler calls to
 * name a usage key), its keys as 3357b0c's tool left them (Free keys on the Free pool, paying keys on API keys of their own). The
 * admin tool's sweep runs before the deploy, during it, after CloudFormation rolled it back, and after it settled.
 * After every step, every active key's usage key, as the deployed authorizer names it (counted or on probation), is
 * an API key on a usage plan of the stage: in that release's template (the 3357b0c fixture, or this synth) or made
 * by the tool at the control-plane fake. API Gateway answers 403 for any other, so none is.
 *
 * What it does not run: API Gateway itself (the fake and the templates stand in for what it holds), and a rollback
 * after the sweep under the new layout, which would 403 the keys it moved: preflight refuses that deploy instead.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as current from '../../lambdas/domain/keys.ts';
import type { KeyRecord, Standing } from '../../lambdas/domain/keys.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { keyLayoutOfStack } from '../../lib/admin/targets.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { OUTPUT_IDS } from '../../lib/stacks/outputs.ts';
import { synthTemplates } from '../infra/templates.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import { legacyKey, made } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { GRACE_MS, STAGE, controlPlaneWorld, problems, recordsOf, type World } from '../helpers/control-plane-world.ts';

const FIXTURE = `test/fixtures/key-layout-1/AnimalStore-${STAGE}.template.json`;
const CODE = 'test/fixtures/key-layout-1/authorizer-code.tar.gz';

/** What an authorizer's code names (domain/keys.ts, in each release the handler's last line). */
type Naming = Pick<typeof current, 'usableKey' | 'gateDecision' | 'gateUsageKey'>;

interface Release {
  readonly name: string;
  readonly template: CfnTemplate;
  readonly authorizer: Naming;
}

let api: TestApi;
let localDeps: AdminDeps;
let released: Release;
let next: Release;
let oldCode: string;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
  oldCode = mkdtempSync(join(tmpdir(), 'release-3357b0c-'));
  // The release's code as `git archive <release> contract lambdas/domain` wrote it (test/fixtures/key-layout-1): a
  // clone without history (CI's may be shallow) has it too.
  execFileSync('tar', ['-xzf', CODE, '-C', oldCode]);
  released = {
    name: '3357b0c',
    template: JSON.parse(readFileSync(FIXTURE, 'utf8')) as CfnTemplate,
    authorizer: (await import(join(oldCode, 'lambdas/domain/keys.ts'))) as Naming,
  };
  next = { name: 'this release', template: synthTemplates()[STAGE] as CfnTemplate, authorizer: current };
}, 240_000);
afterAll(() => {
  api?.close();
  if (oldCode) rmSync(oldCode, { recursive: true, force: true });
});

/** The API key values a template puts on its usage plans. */
function stackValues(t: CfnTemplate): Set<string> {
  const r = Object.entries(t.Resources) as [string, { Type: string; Properties: Record<string, any> }][];
  const onPlans = new Set(
    r.filter(([, x]) => x.Type === 'AWS::ApiGateway::UsagePlanKey').map(([, x]) => x.Properties.KeyId.Ref),
  );
  return new Set(
    r.filter(([id, x]) => x.Type === 'AWS::ApiGateway::ApiKey' && onPlans.has(id)).map(([, x]) => x.Properties.Value),
  );
}

/** The layout the admin tool reads off a stack of that template in that status. */
const layoutOf = (t: CfnTemplate, status: string) =>
  keyLayoutOfStack(status, t.Outputs?.[OUTPUT_IDS.keyLayout]?.Value as string | undefined);

/** Every active key whose usage key, as `release`'s authorizer names it, is on no usage plan of the stage: 403. */
async function refused(w: World, release: Release): Promise<string[]> {
  const on = stackValues(release.template);
  for (const k of w.fake.keys.values())
    if (w.fake.plansOf(k.id).some((p) => w.fake.plans.get(p)!.apiStages.length)) on.add(k.value);
  const nowSec = Math.floor(w.fake.now() / 1000);
  const out: string[] = [];
  for (const r of await recordsOf(w)) {
    if (r.status !== 'active') continue;
    const standing: Standing = await w.plain.store.readStanding(r.hash);
    const { usableKey, gateDecision, gateUsageKey } = release.authorizer;
    const auth = usableKey(r as KeyRecord, STAGE);
    if (!auth) {
      out.push(`${r.keyId} (${r.plan}): 401`);
      continue;
    }
    const named = gateUsageKey(auth, gateDecision(standing, nowSec), STAGE);
    if (!on.has(named)) out.push(`${r.keyId} (${r.plan}, ${gateDecision(standing, nowSec)}): ${named} on no plan`);
  }
  return out;
}

const E600 = { perMinute: 600, perDay: 50_000 };

it("the sweep before, during and after a rolled-back deploy of this release over 3357b0c, then after it: no customer's usage key is on no plan", async () => {
  const w = controlPlaneWorld(localDeps);
  // The stage as 3357b0c's tool left it: Free keys on the Free pool, paying keys on API keys of their own, a Free and
  // a Pro key whose ban ended 10 minutes ago (on probation at the gateway).
  const free = await made(w, 'free');
  const pro = await legacyKey(w, 'pro');
  const business = await legacyKey(w, 'business');
  const enterprise = await legacyKey(w, 'enterprise', E600);
  const gone = await legacyKey(w, 'business');
  for (const id of [free, pro]) {
    const r = (await w.plain.store.getById(id))!;
    await w.plain.store.noteStanding(r.hash, { bannedUntil: Math.floor(w.fake.now() / 1000) - 600 });
  }
  const ownKeys = [...w.fake.keys.keys()];
  const adminOn = (t: CfnTemplate, status: string) => keyAdmin({ ...w.deps, keyLayout: layoutOf(t, status) });
  const sweepTwice = async (admin: ReturnType<typeof adminOn>) => {
    const first = await admin.reconcileAll();
    // Past the grace period, when the sweep deletes what it retired.
    w.fake.t += GRACE_MS + 1_000;
    return [first, await admin.reconcileAll()];
  };
  expect(await refused(w, released)).toEqual([]);

  // Before the deploy (what the docs used to order): the sweep holds every paying key on its own API key.
  const before = adminOn(released.template, 'UPDATE_COMPLETE');
  const [sweep] = await sweepTwice(before);
  expect(await refused(w, released)).toEqual([]);
  expect(sweep!.failed).toEqual([]);
  // A key revoked now too: the old authorizer refuses it, but a restore would bring back the own key it names.
  await before.revoke(gone);
  w.fake.t += GRACE_MS + 1_000;
  const purged = await before.purge();
  expect(purged.purged).toEqual([]);
  expect(purged.failed.map((x) => [x.keyId, x.error])).toEqual([[gone, expect.stringMatching(/waits for a deploy/)]]);
  expect(sweep!.waiting.map((x) => x.keyId).sort()).toEqual([pro, business, enterprise, gone].sort());
  expect(sweep!.waiting[0]!.waiting[0]).toMatch(
    /waits for a deploy: the staging stack's authorizer \(key layout 1, release 3357b0c\).*deploy the first release after 3357b0c \(the first whose stack has the KeyLayout output\) \(key layout 2\) to staging first/,
  );
  expect([...w.fake.keys.keys()]).toEqual(ownKeys);
  // A paying key would have no API key 3357b0c's authorizer names: refused, naming the release; a Free key is made.
  await expect(before.create({ owner: w.owner, plan: 'pro' })).rejects.toThrow(
    /a pro key waits for a deploy: .*deploy the first release after 3357b0c/,
  );
  await expect(before.setPlan(free, { plan: 'business' })).rejects.toThrow(/waits for a deploy/);
  await before.create({ owner: w.owner, plan: 'free' });
  expect(await refused(w, released)).toEqual([]);

  // During the deploy, both authorizers serve (the canary): the tool takes the oldest layout until the stack settles.
  const during = adminOn(next.template, 'UPDATE_IN_PROGRESS');
  await sweepTwice(during);
  expect(await refused(w, released)).toEqual([]);
  expect(await refused(w, next)).toEqual([]);

  // CloudFormation rolls the deploy back: 3357b0c's template again, and a sweep after it moves nothing either.
  await sweepTwice(adminOn(released.template, 'UPDATE_ROLLBACK_COMPLETE'));
  expect([...w.fake.keys.keys()]).toEqual(ownKeys);
  expect(await refused(w, released)).toEqual([]);

  // The deploy again, settled: this release's authorizer names the own keys still there, then the sweep moves them.
  expect(await refused(w, next)).toEqual([]);
  const after = adminOn(next.template, 'UPDATE_COMPLETE');
  const [moved] = await sweepTwice(after);
  expect(moved!.reconciled.map((x) => x.keyId).sort()).toEqual([pro, business, enterprise, gone].sort());
  await after.create({ owner: w.owner, plan: 'pro' });
  expect(await refused(w, next)).toEqual([]);
  expect(await problems(w)).toEqual([]);

  // Rolling back now would 403 the keys the sweep moved (their own API keys are gone): preflight's update rules
  // refuse that deploy, against the deployed stack's template as against --previous.
  expect((await refused(w, released)).length).toBeGreaterThan(0);
  expect(updateFindings(next.template, released.template)).toContainEqual(
    expect.stringMatching(/^update: the key layout goes back from 2 to 1: /),
  );
  expect(updateFindings(released.template, next.template).filter((f) => /key layout/.test(f))).toEqual([]);
}, 240_000);

it("reads the layout off the stack's KeyLayout output: none is the oldest, and an unsettled stack the oldest too", () => {
  expect(keyLayoutOfStack('UPDATE_COMPLETE', undefined)).toBe(1);
  expect(keyLayoutOfStack('UPDATE_COMPLETE', '2')).toBe(2);
  expect(keyLayoutOfStack('UPDATE_ROLLBACK_COMPLETE', '2')).toBe(2);
  // Both releases' authorizers may serve while a deploy or its rollback runs, or where a failed one stopped.
  for (const status of ['UPDATE_IN_PROGRESS', 'UPDATE_ROLLBACK_IN_PROGRESS', 'UPDATE_ROLLBACK_FAILED'])
    expect(keyLayoutOfStack(status, '2'), status).toBe(1);
  // A newer layout than this code knows: its writes need nothing past its own.
  expect(keyLayoutOfStack('UPDATE_COMPLETE', '9')).toBe(2);
  expect(() => keyLayoutOfStack('UPDATE_COMPLETE', 'two')).toThrow(/unknown key layout/);
  expect(layoutOf(next.template, 'CREATE_COMPLETE')).toBe(2);
  expect(layoutOf(released.template, 'CREATE_COMPLETE')).toBe(1);
});
