/**
 * Preflight's Enterprise bracket pools check (lib/preflight/bracket-pools.ts) on the admin tool's control-plane fake
 * (test/helpers/control-plane-fake.ts, answering in pages: paged-answers.ts) and key records on DynamoDB Local: a
 * stage whose brackets are complete passes; a bracket made before the probation member fails it with the command
 * that finishes it, and after the real `keys reconcile --all` on the same fake preflight passes; every page of keys
 * and usage plans is read; a read that fails at any call, or is refused for want of a permission, is a finding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseBracket } from '../../contract/brackets.ts';
import { BRACKET_POOL } from '../../contract/key-pool.ts';
import type { PlanLimits } from '../../contract/plans.ts';
import { bracketPlanName } from '../../lib/admin/brackets.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { bracketPoolsCheck } from '../../lib/preflight/bracket-pools-check.ts';
import { readFailureFinding, type BracketReads } from '../../lib/preflight/bracket-pools.ts';
import { runChecks, type PreflightInput } from '../../lib/preflight/checks.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { legacyKey, made } from '../helpers/admin-scenarios.ts';
import type { FaultMode } from '../helpers/control-plane-fake.ts';
import { controlPlaneWorld, problems, STAGE, type World } from '../helpers/control-plane-world.ts';
import { pageAnswers } from '../helpers/paged-answers.ts';

/** A local API's DynamoDB Local with fresh tables, whose records every world here keeps (each its own owner's). */
let started: Awaited<ReturnType<typeof startLocalAdmin>> | undefined;
let local: AdminDeps;
beforeAll(async () => {
  started = await startLocalAdmin();
  local = started.deps;
});
afterAll(() => started?.api.close());

/** An Enterprise key's limits (its bracket's pool is made by `keys create`). */
const E600: PlanLimits = { perMinute: 600, perDay: 50_000 };

/** The check's reads on the world: the admin's own store (its owner's records) and gateway adapter. */
const readsOf = (w: World, extra: Partial<BracketReads> = {}): BracketReads => ({
  stage: STAGE,
  store: w.plain.store,
  gateway: w.plain.gateway,
  ...extra,
});

/** Preflight's lines for the stage with this check alone (runChecks: a throw would be a finding too), and notes. */
async function preflightOn(reads: BracketReads, name = STAGE) {
  const notes: string[] = [];
  const input = { stage: STAGE, name, stackName: `AnimalStore-${name}`, note: (l: string) => notes.push(l) };
  const findings = await runChecks(input as unknown as PreflightInput, [bracketPoolsCheck(async () => reads)]);
  return { findings, notes };
}

/** Takes pool member `m` of a bracket off its usage plan (and deletes its API key unless `keepKey`). */
function dropMember(w: World, limits: PlanLimits, m: number, keepKey = false) {
  const name = `${bracketPlanName(STAGE, enterpriseBracket(limits))}-m${m}`;
  const key = [...w.fake.keys.values()].find((k) => k.name === name)!;
  for (const p of w.fake.plans.values()) p.keys.delete(key.id);
  if (!keepKey) w.fake.keys.delete(key.id);
}

/** The command a finding names, as `npm run admin --` takes it, run on the world (the CLI's --local on its deps). */
async function runNamedCommand(w: World, finding: string) {
  const command = /run npm run admin -- (keys reconcile --all) --stage (\S+),/.exec(finding);
  expect(command, finding).not.toBeNull();
  expect(command![2]).toBe(STAGE);
  const run = await runLocalAdmin(w.deps, ...command![1]!.split(' '));
  expect(run.code, run.err).toBe(0);
}

/** The operations the fake was sent from call `from` on. */
const opsFrom = (w: World, from: number) => w.fake.calls.slice(from).map((c) => c.op);

describe('a stage whose brackets are complete, or that has none', () => {
  it('passes with no finding, and only reads', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    await made(w, 'enterprise', E600);
    const from = w.fake.calls.length;
    expect(await preflightOn(readsOf(w))).toEqual({ findings: [], notes: [] });
    // Reads only, and one of each per bracket however many keys are in it (AWS's pages hold 500).
    expect(opsFrom(w, from)).toEqual(['GetUsagePlans', 'GetUsagePlanKeys']);
    expect(await problems(w)).toEqual([]);
  });

  it('passes a stage with no Enterprise key without asking API Gateway anything', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'free');
    await made(w, 'business');
    const from = w.fake.calls.length;
    expect((await preflightOn(readsOf(w))).findings).toEqual([]);
    expect(opsFrom(w, from)).toEqual([]);
  });

  it('passes an Enterprise key still on its own API key and usage plan (a stage the last release runs) without asking', async () => {
    const w = controlPlaneWorld(local);
    await legacyKey(w, 'enterprise', E600);
    // No bracket at the gateway, as on a stage whose tool predates brackets: the key's own API key names it.
    const plan = [...w.fake.plans.values()].find((p) => p.name === bracketPlanName(STAGE, enterpriseBracket(E600)))!;
    for (const k of plan.keys) w.fake.keys.delete(k);
    w.fake.plans.delete(plan.id);
    const from = w.fake.calls.length;
    expect((await preflightOn(readsOf(w))).findings).toEqual([]);
    expect(opsFrom(w, from)).toEqual([]);
  });

  it('does not look for brackets on the account stack, which has none', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    dropMember(w, E600, BRACKET_POOL.members);
    expect((await preflightOn(readsOf(w), 'account')).findings).toEqual([]);
  });
});

describe('a bracket made before its probation member', () => {
  it('fails preflight naming the bracket and the command; after that command preflight passes', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    dropMember(w, E600, BRACKET_POOL.members);
    const { findings } = await preflightOn(readsOf(w));
    expect(findings).toHaveLength(1);
    const id = enterpriseBracket(E600).id;
    expect(findings[0]).toContain(`1 of 1 bracket(s) in use on ${STAGE}`);
    expect(findings[0]).toContain(`${id}: probation member m${BRACKET_POOL.members} not on its usage plan`);
    // The authorizer names the probation member only once it is recorded: no 403, only no probation until then.
    expect(findings[0]).toContain('counted on their ordinary members (no probation)');
    expect(findings[0]).not.toContain('403');
    expect(findings[0]).toContain(`npm run admin -- keys reconcile --all --stage ${STAGE}`);
    await runNamedCommand(w, findings[0]!);
    expect(await preflightOn(readsOf(w))).toEqual({ findings: [], notes: [] });
    expect(await problems(w)).toEqual([]);
  });

  it('fails it too when the probation member exists but is on no usage plan (a sweep stopped between its steps)', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    dropMember(w, E600, BRACKET_POOL.members, true);
    const { findings } = await preflightOn(readsOf(w));
    expect(findings).toEqual([
      expect.stringContaining(`probation member m${BRACKET_POOL.members} not on its usage plan`),
    ]);
    await runNamedCommand(w, findings[0]!);
    expect((await preflightOn(readsOf(w))).findings).toEqual([]);
  });

  it('names a bracket whose usage plan is gone, and a mapped member missing, as incomplete too', async () => {
    const w = controlPlaneWorld(local);
    const other = { perMinute: 6_000, perDay: 500_000 };
    await made(w, 'enterprise', E600);
    await made(w, 'enterprise', other);
    dropMember(w, E600, 1);
    const plan = [...w.fake.plans.values()].find((p) => p.name === bracketPlanName(STAGE, enterpriseBracket(other)))!;
    w.fake.plans.delete(plan.id);
    const { findings } = await preflightOn(readsOf(w));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toContain('2 of 2 bracket(s)');
    expect(findings[0], 'a mapped member missing refuses its keys').toContain('API Gateway answers 403');
    expect(findings[0]).toContain(`${enterpriseBracket(E600).id}: member m1 not on its usage plan`);
    expect(findings[0]).toContain(`${enterpriseBracket(other).id}: no usage plan`);
  });
});

/** Limits in distinct brackets (contract/brackets.ts's ladder), as many as asked. */
function distinctBrackets(n: number): PlanLimits[] {
  const byId = new Map<string, PlanLimits>();
  for (const perMinute of [600, 2_000, 6_000])
    for (const perDay of [50_000, 100_000, 500_000])
      byId.set(enterpriseBracket({ perMinute, perDay }).id, { perMinute, perDay });
  expect(byId.size).toBeGreaterThanOrEqual(n);
  return [...byId.values()].slice(0, n);
}

describe('many brackets, read page by page', () => {
  it('reads every page of keys and usage plans, finds the incomplete brackets on the last pages, and the retry converges', async () => {
    const w = controlPlaneWorld(local);
    const pages = pageAnswers(w.fake, 2);
    const brackets = distinctBrackets(9);
    for (const limits of brackets) await made(w, 'enterprise', limits);
    // Keys in a bracket already seen: the listing goes on past them.
    await made(w, 'enterprise', brackets[0]);
    await made(w, 'enterprise', brackets[0]);
    const old = brackets.slice(4);
    for (const limits of old) dropMember(w, limits, BRACKET_POOL.members);
    const from = pages.length;
    const { findings } = await preflightOn(readsOf(w, { pageSize: 2 }));
    expect(findings).toHaveLength(1);
    expect(findings[0]).toContain(`${old.length} of ${brackets.length} bracket(s) in use`);
    expect(findings[0]).toContain(`; and ${old.length - 3} more)`);
    // Every usage plan page was read (12 plans: the standard 3 and 9 brackets' in pages of 2), and the plans' keys.
    const plansRead = pages.slice(from).filter((p) => p.op === 'GetUsagePlans');
    expect(plansRead.filter((p) => p.position !== undefined).length).toBeGreaterThan(0);
    expect(pages.slice(from).some((p) => p.op === 'GetUsagePlanKeys' && p.position !== undefined)).toBe(true);
    await runNamedCommand(w, findings[0]!);
    expect((await preflightOn(readsOf(w, { pageSize: 2 }))).findings).toEqual([]);
    expect(await problems(w)).toEqual([]);
  });
});

describe('a read that fails', () => {
  it.each(['refused', 'lost', 'throttled'] as FaultMode[])(
    'at any of its calls (%s) is one finding that says so, never a crash; a throttle is waited out',
    async (mode) => {
      const w = controlPlaneWorld(local);
      await made(w, 'enterprise', E600);
      const from = w.fake.calls.length;
      await preflightOn(readsOf(w));
      const calls = w.fake.calls.length - from;
      expect(calls).toBeGreaterThanOrEqual(2);
      for (let n = 1; n <= calls; n++) {
        w.fake.failAt(n, mode);
        const { findings } = await preflightOn(readsOf(w));
        if (mode === 'throttled') expect(findings, `call ${n}`).toEqual([]);
        else
          expect(findings, `call ${n}`).toEqual([
            expect.stringMatching(/^Enterprise bracket pools: could not read .+: run preflight again/),
          ]);
      }
      expect((await preflightOn(readsOf(w))).findings).toEqual([]);
    },
  );

  const denied = (action: string) =>
    Object.assign(
      new Error(`User: arn:aws:sts::123456789012:assumed-role/pipeline is not authorized to perform: ${action}`),
      {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 403 },
      },
    );

  it('for want of apigateway:GET names the permissions the check needs', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    const whole = w.fake.send.bind(w.fake);
    w.fake.send = async (command: object) => {
      if (command.constructor.name === 'GetUsagePlansCommand') throw denied('apigateway:GET');
      return whole(command);
    };
    const { findings } = await preflightOn(readsOf(w));
    expect(findings).toEqual([
      expect.stringMatching(/could not read API Gateway's usage plans .*AccessDeniedException/),
    ]);
    expect(findings[0]).toMatch(/need .*apigateway:GET on \/usageplans and \/usageplans\/\*\/keys; grant them/);
  });

  it('for want of dynamodb:Query on the keys table names the permissions too', async () => {
    const w = controlPlaneWorld(local);
    const store = { listPage: () => Promise.reject(denied('dynamodb:Query')) };
    const { findings } = await preflightOn(readsOf(w, { store }));
    expect(findings).toEqual([
      expect.stringMatching(/could not read the stage's Enterprise keys .*AccessDeniedException/),
    ]);
    expect(findings[0]).toMatch(/dynamodb:Query on the keys table/);
  });

  it('with credentials AWS refused (expired) says to renew them, not to grant permissions', async () => {
    const w = controlPlaneWorld(local);
    const expired = Object.assign(new Error('The security token included in the request is expired'), {
      name: 'ExpiredTokenException',
      $metadata: { httpStatusCode: 400 },
    });
    const { findings } = await preflightOn(readsOf(w, { store: { listPage: () => Promise.reject(expired) } }));
    expect(findings).toEqual([
      expect.stringMatching(/ExpiredTokenException: .*AWS refused preflight's credentials; renew them/),
    ]);
  });

  it("of the stack's outputs for want of cloudformation:DescribeStacks names the permissions; no stack is a note", async () => {
    const notes: string[] = [];
    const input = { stage: STAGE, name: STAGE, note: (l: string) => notes.push(l) } as unknown as PreflightInput;
    // CloudFormation's query protocol names it AccessDenied.
    const err = Object.assign(denied('cloudformation:DescribeStacks'), { name: 'AccessDenied' });
    const refused = bracketPoolsCheck(async () => ({
      finding: readFailureFinding("the stage's stack outputs (DescribeStacks)", err),
    }));
    expect(await refused.run(input)).toEqual([
      expect.stringMatching(
        /could not read the stage's stack outputs .*AccessDenied.*need cloudformation:DescribeStacks/,
      ),
    ]);
    const absent = bracketPoolsCheck(async () => ({ skip: 'no stack' }));
    expect(await absent.run(input)).toEqual([]);
    expect(notes).toEqual(['Enterprise bracket pools: no stack: skipped']);
  });
});
