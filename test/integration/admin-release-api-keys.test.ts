/**
 * `keys remove-release-api-keys --stage <stage>`: what release 3357b0c's admin tool made at the stage's API Gateway
 * (API keys of keys' own, Enterprise usage plans) is deleted by one paced, resumable command, which deletes only what
 * no release the stack can run or roll back to names: it refuses on an unsettled or rolled-back stack, within the
 * authorizer cache TTL of a deploy, and on a deployed template without the plan keys or still with 3357b0c's Free
 * pool; it leaves another stage's plans and keys,
 * says its progress on stderr, and on any failure names itself as the one command that finishes; run again, it says
 * there is nothing left. Over the CLI, on the fake control plane (control-plane-fake.ts) and the stack as
 * CloudFormation describes it (control-plane-world.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin, type Io } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import { releaseLeftovers } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { pageAnswers } from '../helpers/paged-answers.ts';
import { API, CACHE_TTL_MS, controlPlaneWorld, problems, STAGE, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let local: AdminDeps;
beforeAll(async () => {
  ({ api, deps: local } = await startLocalAdmin());
});
afterAll(() => api?.close());

const REMOVE = ['keys', 'remove-release-api-keys'];

/** The command on the world's stage (or `stage`), as an admin runs it: exit code, stdout, stderr. */
async function run(w: World, args: string[], opts: { stage?: string; ask?: Io['ask'] } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    [...args, '--stage', opts.stage ?? STAGE],
    { out: (l) => out.push(l), err: (l) => err.push(l), ...(opts.ask ? { ask: opts.ask } : {}) },
    async () => w.deps,
  );
  return { code, out: out.join('\n'), err };
}

const writes = (w: World) => w.fake.calls.filter((c) => !c.op.startsWith('Get'));

describe('keys remove-release-api-keys', () => {
  it("deletes what 3357b0c's tool made, leaves the stack's and another stage's, says each step; again: nothing left", async () => {
    const w = controlPlaneWorld(local);
    const left = releaseLeftovers(w);
    const first = await run(w, [...REMOVE, '--json']);
    expect(first.code, first.err.join('\n')).toBe(0);
    const data = JSON.parse(first.out) as Record<string, string[]>;
    expect([...data.deletedApiKeys!].sort()).toEqual([...left.gone.apiKeys].sort());
    expect(data.detachedApiKeys).toEqual([left.shared]);
    expect([...data.deletedUsagePlans!].sort()).toEqual([...left.gone.usagePlans].sort());
    expect(data.leftUsagePlans).toEqual([left.both]);
    for (const id of left.gone.apiKeys) expect(w.fake.keys.has(id), id).toBe(false);
    for (const id of left.gone.usagePlans) expect(w.fake.plans.has(id), id).toBe(false);
    for (const id of left.stays.apiKeys) expect(w.fake.keys.has(id), id).toBe(true);
    expect(w.fake.plansOf(left.shared)).toEqual(left.stays.usagePlans.slice(0, 1));
    expect(w.fake.plans.get(left.both)!.apiStages).toEqual([{ apiId: 'api999', stage: 'v1' }]);
    expect(await problems(w)).toEqual([]);
    // Progress on stderr, a line per step after the plan of work.
    const steps = first.err.map((l) => (JSON.parse(l) as { progress: string }).progress);
    expect(steps[0]).toMatch(/^staging: 17 step\(s\) to remove what release 3357b0c made/);
    expect(steps.at(-1)).toMatch(/: done \(17\/17\)$/);

    const written = writes(w).length;
    const again = await run(w, REMOVE);
    expect(again).toMatchObject({
      code: 0,
      out: `${STAGE}: nothing release 3357b0c made is left on the stage (stack AnimalStore-${STAGE}).`,
    });
    expect(writes(w).length, 'nothing written the second time').toBe(written);
  });

  it('a step that fails names the command itself; run again, it lists what is left and finishes', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    // The listing reads, then the fourth deletion refused.
    const reads = 1 + [...w.fake.plans.values()].filter((p) => p.apiStages.length).length;
    w.fake.failAt(reads + 4, 'refused');
    const first = await run(w, REMOVE);
    expect(first.code).toBe(1);
    expect(first.err.at(-1)).toMatch(
      /^error: deleting API key \S+ \(.*\) failed after 3 of 17 step\(s\) \(ServiceUnavailableException: .*\): run `keys remove-release-api-keys` again: it lists what is left and goes on$/,
    );
    expect(first.err.filter((l) => /: done \(\d+\/17\)$/.test(l))).toHaveLength(3);
    const second = await run(w, REMOVE);
    expect(second.code, second.err.join('\n')).toBe(0);
    expect(second.err[0]).toMatch(/^staging: 14 step\(s\)/);
    expect(await problems(w)).toEqual([]);
  });

  it('reads every page of usage plans and of their keys', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    const reads = pageAnswers(w.fake, 2);
    expect((await run(w, REMOVE)).code).toBe(0);
    expect(reads.filter((r) => r.op === 'GetUsagePlans' && r.position)).not.toEqual([]);
    expect(await problems(w)).toEqual([]);
  });

  it('a stack that cannot be read stops it before anything is deleted, naming the command', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    w.stack.failNextRead = true;
    const failed = await run(w, REMOVE);
    expect(failed.err).toEqual([
      "error: nothing was removed: the stage's stack could not be read (Throttling: Rate exceeded): run `keys remove-release-api-keys` again",
    ]);
    expect(w.fake.calls).toEqual([]);
    expect((await run(w, REMOVE)).code).toBe(0);
  });
});

describe('it refuses, with nothing called at API Gateway, unless no release the stack can run names what it deletes', () => {
  const cases: Array<[string, (w: World) => void, RegExp]> = [
    [
      'a deploy under way',
      (w) => (w.stack.view = { ...w.stack.view, status: 'UPDATE_IN_PROGRESS' }),
      /^error: stack AnimalStore-staging is UPDATE_IN_PROGRESS, not settled: .* wait for a \*_COMPLETE status, then run `keys remove-release-api-keys`$/,
    ],
    [
      'a rollback under way',
      (w) => (w.stack.view = { ...w.stack.view, status: 'UPDATE_ROLLBACK_IN_PROGRESS' }),
      /^error: stack AnimalStore-staging is UPDATE_ROLLBACK_IN_PROGRESS, not settled: .* wait for a \*_COMPLETE status, then run `keys remove-release-api-keys`$/,
    ],
    [
      'a deploy that ended less than the authorizer cache TTL ago',
      (w) => (w.stack.view = { ...w.stack.view, changedAt: w.fake.now() - CACHE_TTL_MS / 2 }),
      /^error: stack AnimalStore-staging changed at \S+: an authorizer answer cached before then may name what this deletes until \S+; run `keys remove-release-api-keys` again from then$/,
    ],
    [
      'release 3357b0c deployed (no plan keys)',
      (w) => {
        const resources = w.stack.view.template.Resources as Record<string, unknown>;
        for (const id of Object.keys(resources)) if (id.endsWith('PlanKey')) delete resources[id];
        resources.UsagePlanFreePool = { Type: 'AWS::ApiGateway::UsagePlan' };
      },
      /^error: stack AnimalStore-staging has no API key of plan free, pro, business, enterprise in its deployed template: .*; deploy this release to staging/,
    ],
    [
      "the migration release deployed (plan keys, and still 3357b0c's Free pool)",
      (w) => {
        (w.stack.view.template.Resources as Record<string, unknown>).UsagePlanFreePool = {
          Type: 'AWS::ApiGateway::UsagePlan',
        };
      },
      /^error: stack AnimalStore-staging still has release 3357b0c's UsagePlanFreePool: a rollback there would name what this deletes; deploy this release to staging/,
    ],
  ];
  it.each(cases)('%s', async (_what, make, said) => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    make(w);
    const refused = await run(w, REMOVE);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(said);
    expect(w.fake.calls).toEqual([]);
  });

  it('--local is refused before anything is connected', async () => {
    const err: string[] = [];
    const code = await runAdmin([...REMOVE, '--local'], { out: () => {}, err: (l) => err.push(l) }, async () => {
      throw new Error('connected');
    });
    expect([code, err]).toEqual([
      1,
      [
        "error: keys remove-release-api-keys deletes what release 3357b0c made at a stage's API Gateway, which --local has none of: use --stage",
      ],
    ]);
  });

  it('on production it asks for the stage name, or takes --yes; a wrong answer changes nothing', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    const asked: string[] = [];
    const wrong = await run(w, REMOVE, { stage: 'production', ask: async (q) => (asked.push(q), 'staging') });
    expect(asked[0]).toMatch(/^Delete the API keys and usage plans release 3357b0c made on production\?/);
    expect([wrong.code, wrong.err]).toEqual([1, ['error: not confirmed: nothing changed']]);
    const none = await run(w, REMOVE, { stage: 'production' });
    expect(none.err).toEqual([
      'error: keys remove-release-api-keys on production asks for confirmation and there is no terminal to ask: add --yes to go ahead',
    ]);
    expect(w.fake.calls).toEqual([]);
    // The fake's stack is the stage's whatever the target's name: confirmed, it runs.
    expect((await run(w, [...REMOVE, '--yes'], { stage: 'production' })).code).toBe(0);
    expect(w.fake.plans.get(w.stack.plans.free)!.apiStages).toEqual([API]);
  });
});
