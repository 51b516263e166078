/**
 * Every admin command converges from any failed step. Each command runs once clean, counting its calls to storage
 * (DynamoDB Local, through the counted ports of storage-faults.ts) and, for the one command that writes to API
 * Gateway, to its control plane (the fake: control-plane-fake.ts): the step list comes from the code, not from this
 * file. Then, for every one of those calls and every way it can fail (a throttle, an error, an answer lost after it
 * applied), the command runs again on a fresh world with that one call failing, and then the next command its message
 * names (the same command again) runs, as an admin would. After that, the records say what the command was asked,
 * the limiter's items (standing, counts layout) and the gateway agree with them, and no key is stranded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limiterShards, type PlanName } from '../../contract/plans.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import { bannedKey, dayCounters, made, releaseLeftovers, spentKey } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import type { FaultMode } from '../helpers/control-plane-fake.ts';
import { controlPlaneWorld, problems, recordsOf, STAGE, type World } from '../helpers/control-plane-world.ts';
import type { StorageFault } from '../helpers/storage-faults.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

interface Scenario {
  readonly name: string;
  /** Keys the command starts from (made with no fault). */
  readonly setup: (w: World) => Promise<string[]>;
  /** The command line, after `npm run admin --`. */
  readonly args: (w: World, ids: string[]) => string[];
  /** What the records look like once it has run through. */
  readonly done: (records: KeyRecord[], w: World) => void;
}

const E600 = { perMinute: 600, perDay: 50_000 };
const limitArgs = (l: { perMinute?: number; perDay?: number }) => [
  ...(l.perMinute ? ['--per-minute', String(l.perMinute)] : []),
  ...(l.perDay ? ['--per-day', String(l.perDay)] : []),
];
const setPlan =
  (plan: PlanName, l = {}) =>
  (_w: World, [id]: string[]) => ['keys', 'set-plan', id!, plan, ...limitArgs(l)];
const onPlan = (plan: PlanName, limits?: object) => (records: KeyRecord[]) =>
  expect(records.map((r) => [r.plan, r.limits])).toEqual([[plan, limits]]);

/** A set-plan of the key `setup` makes, to `plan` with the limits given; the record ends with `limits`. */
const move = (
  name: string,
  setup: (w: World) => Promise<string>,
  plan: PlanName,
  given: { perMinute?: number; perDay?: number } = {},
  limits: object | undefined = plan === 'enterprise' ? given : undefined,
): Scenario => ({ name, setup: async (w) => [await setup(w)], args: setPlan(plan, given), done: onPlan(plan, limits) });

const SCENARIOS: Scenario[] = [
  {
    name: 'create (Pro)',
    setup: async () => [],
    args: (w) => ['keys', 'create', '--owner', w.owner, '--plan', 'pro'],
    // An answer lost after the record landed is found, not made again: one key, whatever failed.
    done: (records) => expect(records.length).toBe(1),
  },
  {
    name: 'create (Enterprise)',
    setup: async () => [],
    args: (w) => ['keys', 'create', '--owner', w.owner, '--plan', 'enterprise', ...limitArgs(E600)],
    // An answer lost after the record landed is found, not made again: one key, whatever failed.
    done: (records) => expect(records.length).toBe(1),
  },
  {
    name: 'set-plan up: a Free key that spent its day → Pro',
    setup: async (w) => {
      const id = await made(w, 'free');
      await spentKey(w, id);
      return [id];
    },
    args: setPlan('pro'),
    done: onPlan('pro'),
  },
  move('set-plan down: Business → Free', (w) => made(w, 'business'), 'free'),
  move(
    'set-plan of Enterprise limits, one limit given (the other kept)',
    (w) => made(w, 'enterprise', E600),
    'enterprise',
    { perDay: 900_000 },
    { perMinute: 600, perDay: 900_000 },
  ),
  {
    name: "set-plan Enterprise limits across shard layouts: today's counts move",
    setup: async (w) => {
      const id = await made(w, 'enterprise', { perMinute: 100_000, perDay: 10_000_000 });
      await dayCounters(w, id, { d: 5_000 });
      return [id];
    },
    args: setPlan('enterprise', { perMinute: 150_000 }),
    done: onPlan('enterprise', { perMinute: 150_000, perDay: 10_000_000 }),
  },
  {
    name: 'revoke',
    setup: async (w) => [await made(w, 'pro')],
    args: (_w, [id]) => ['keys', 'revoke', id!],
    done: (records) => expect(records.map((r) => r.status)).toEqual(['revoked']),
  },
  {
    name: "rotate (a key an admin banned: the ban follows the new secret's standing)",
    setup: async (w) => {
      const id = await made(w, 'pro');
      await w.admin.ban(id, 30);
      return [id];
    },
    args: (_w, [id]) => ['keys', 'rotate', id!],
    done: (records) => expect(records[0]!.rotatedAt).toBeDefined(),
  },
  {
    name: 'rotate --overlap (the old secret kept for a while)',
    setup: async (w) => [await made(w, 'pro')],
    args: (_w, [id]) => ['keys', 'rotate', id!, '--overlap', '30'],
    done: (records) => expect(records[0]!.rotatedAt).toBeDefined(),
  },
  {
    name: 'restore (a key revoked by mistake)',
    setup: async (w) => {
      const id = await made(w, 'business');
      await w.admin.revoke(id);
      return [id];
    },
    args: (_w, [id]) => ['keys', 'restore', id!],
    done: (records) => expect(records.map((r) => [r.status, r.revokedAt])).toEqual([['active', undefined]]),
  },
  {
    name: 'set-plan back the same day: the ban the mistaken move caused is lifted, its escalation undone',
    setup: async (w) => {
      const id = await made(w, 'business');
      await w.admin.setPlan(id, { plan: 'free' });
      await bannedKey(w, id);
      return [id];
    },
    args: setPlan('business'),
    done: (records) => {
      expect(records.map((r) => [r.plan, r.planMove])).toEqual([['business', undefined]]);
      expect(records[0]!.unbannedThrough).toBeGreaterThan(0);
    },
  },
  {
    name: 'ban',
    setup: async (w) => [await made(w, 'business')],
    args: (_w, [id]) => ['keys', 'ban', id!, '--minutes', '20'],
    done: (records) => expect(records[0]!.bannedUntil).toBeGreaterThan(0),
  },
  {
    name: 'unban (banned by the limiter, and its day spent)',
    setup: async (w) => {
      const id = await made(w, 'free');
      await bannedKey(w, id);
      await spentKey(w, id);
      return [id];
    },
    args: (_w, [id]) => ['keys', 'unban', id!],
    done: (records) => expect(records[0]!.unbannedThrough).toBeGreaterThan(0),
  },
  {
    name: "remove-release-api-keys (what release 3357b0c's tool made at the gateway)",
    setup: async (w) => {
      releaseLeftovers(w);
      return [];
    },
    args: () => ['keys', 'remove-release-api-keys'],
    // Only the stack's plan keys are left on the stage (problems() checks it), and what is another stage's.
    done: (_records, w) =>
      expect([...w.fake.keys.values()].map((k) => k.name).sort()).toEqual([
        'animal-store-key_shared',
        'production-ProPlanKey',
        `${STAGE}-BusinessPlanKey`,
        `${STAGE}-EnterprisePlanKey`,
        `${STAGE}-FreePlanKey`,
        `${STAGE}-ProPlanKey`,
      ]),
  },
];

type Fault =
  { where: 'control plane'; at: number; mode: FaultMode } | { where: 'storage'; at: number; mode: StorageFault };

/** One admin command on the world's stage, as an admin runs it: exit code and stderr. */
async function stageAdmin(w: World, args: string[]) {
  const err: string[] = [];
  const code = await runAdmin(
    [...args, '--stage', STAGE],
    { out: () => {}, err: (l) => err.push(l) },
    async () => w.deps,
  );
  return { code, err: err.join('\n') };
}

/** The next command a failed run's message names: `keys …` in backquotes, or the same command again. */
function nextCommand(err: string, args: string[]): string[] | undefined {
  const named = /run `(keys [^`]+)`/.exec(err);
  if (named) return named[1]!.split(' ');
  if (/run (the same command|it) again/.test(err)) return args;
  return undefined;
}

/** Runs a scenario with one fault, then the next commands its messages name until one succeeds. */
async function play(s: Scenario, fault?: Fault) {
  const w = controlPlaneWorld(localDeps);
  const ids = await s.setup(w);
  const start = { cp: w.fake.calls.length, st: w.storage.calls.length };
  if (fault?.where === 'control plane') w.fake.failAt(fault.at, fault.mode);
  if (fault?.where === 'storage') w.storage.failAt(fault.at, fault.mode);
  const args = s.args(w, ids);
  let run = await stageAdmin(w, args);
  const calls = { cp: w.fake.calls.length - start.cp, st: w.storage.calls.length - start.st };
  const trail = [`${args.join(' ')} → ${run.code} ${run.err}`];
  for (let i = 0; run.code !== 0 && i < 3; i++) {
    const next = nextCommand(run.err, args);
    if (!next) break;
    run = await stageAdmin(w, next);
    trail.push(`${next.join(' ')} → ${run.code} ${run.err}`);
  }
  return { w, calls, code: run.code, trail };
}

describe('every admin command, failing at each of its steps in turn, converges with the next command it names', () => {
  for (const s of SCENARIOS) {
    it(
      s.name,
      async () => {
        const clean = await play(s);
        expect([clean.code, clean.trail.length], `a clean run\n${clean.trail.join('\n')}`).toEqual([0, 1]);
        expect(await problems(clean.w)).toEqual([]);
        s.done(await recordsOf(clean.w), clean.w);
        const faults: Fault[] = [
          ...Array.from({ length: clean.calls.cp }, (_, i) =>
            (['throttled', 'refused', 'lost'] as const).map((mode) => ({
              where: 'control plane' as const,
              at: i + 1,
              mode,
            })),
          ).flat(),
          ...Array.from({ length: clean.calls.st }, (_, i) =>
            (['throttle', 'error', 'lost'] as const).map((mode) => ({ where: 'storage' as const, at: i + 1, mode })),
          ).flat(),
        ];
        expect(clean.calls.st + clean.calls.cp).toBeGreaterThan(0);
        for (const fault of faults) {
          const run = await play(s, fault);
          const label = `${s.name}: ${fault.mode} at ${fault.where} call ${fault.at}\n${run.trail.join('\n')}`;
          expect(run.code, label).toBe(0);
          expect(await problems(run.w), label).toEqual([]);
          s.done(await recordsOf(run.w), run.w);
        }
      },
      600_000,
    );
  }
});

it('the scenarios cross shard layouts where they say they do', () => {
  expect(limiterShards({ perMinute: 100_000, perDay: 1 })).not.toBe(limiterShards({ perMinute: 150_000, perDay: 1 }));
});
