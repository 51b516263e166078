/**
 * Keys at any scale touch nothing at API Gateway: every key of a plan counts against its plan's one API key, which the
 * stack makes, so no number of customers meets the account's 10,000 API keys, 300 usage plans or its control plane's
 * rates. 100,000 keys are created, rotated, moved to another plan (and Enterprise limits) and revoked through the admin
 * service, counting every API Gateway call the process makes (the SDK client's `send`, whatever client would make
 * it) and every time a command asks for the control plane: 0. The 100,000 run on the storage ports in memory
 * (admin-memory-store.ts: 400,000 commands on DynamoDB Local would take hours); the same commands on DynamoDB Local,
 * through the real key store and the command line, for fifty keys.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { runAdmin } from '../../lib/admin/cli.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import { memoryDeps, memoryStore } from '../helpers/admin-memory-store.ts';
import type { TestApi } from '../helpers/api.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** Every API Gateway call the process makes, and every time a command asks for the control plane. */
const gateway = { sent: 0, asked: 0 };
beforeEach(() => {
  gateway.sent = 0;
  gateway.asked = 0;
  vi.spyOn(APIGatewayClient.prototype, 'send').mockImplementation(async () => {
    gateway.sent++;
    throw new Error('no key command may call API Gateway');
  });
});
afterEach(() => vi.restoreAllMocks());

const controlPlane: AdminDeps['controlPlane'] = async () => {
  gateway.asked++;
  throw new Error('no key command may ask for the control plane');
};

const E = { perMinute: 6_000, perDay: 1_000_000 };
/** The plan key `i` is created on, and the one it moves to. */
const planOf = (i: number): PlanName => PLAN_NAMES[i % PLAN_NAMES.length]!;
const movedTo = (i: number): PlanName => PLAN_NAMES[(i + 1) % PLAN_NAMES.length]!;
const limitsFor = (plan: PlanName, i: number) =>
  plan === 'enterprise' ? { perMinute: E.perMinute + (i % 1_000), perDay: E.perDay } : {};

it('100,000 keys created, rotated, moved and revoked: 0 API Gateway calls', async () => {
  const n = 100_000;
  const store = memoryStore();
  let t = Date.UTC(2036, 0, 1, 12);
  const admin = keyAdmin(memoryDeps(store, { controlPlane, now: () => (t += 10) }));
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const plan = planOf(i);
    ids.push((await admin.create({ owner: `customer-${i}`, plan, ...limitsFor(plan, i) })).record.keyId);
  }
  for (const id of ids) await admin.rotate(id);
  for (const [i, id] of ids.entries()) {
    const plan = movedTo(i);
    const moved = await admin.setPlan(id, { plan, ...limitsFor(plan, i) });
    expect(moved.changed).toBe(true);
  }
  for (const id of ids) await admin.revoke(id);
  expect(store.size()).toBe(n);
  expect((await store.list()).every((r) => r.status === 'revoked')).toBe(true);
  // Each change landed with its history entry in its one write.
  expect(store.written.entries).toBe(4 * n);
  expect(gateway).toEqual({ sent: 0, asked: 0 });
}, 300_000);

it('the same commands through the real key store on DynamoDB Local and the command line: 0 API Gateway calls', async () => {
  const deps: AdminDeps = { ...localDeps, controlPlane };
  const admin = keyAdmin(deps);
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const plan = planOf(i);
    ids.push((await admin.create({ owner: `scale-${i}`, plan, ...limitsFor(plan, i) })).record.keyId);
  }
  for (const [i, id] of ids.entries()) {
    await admin.rotate(id, i % 2 ? 30 : 0);
    await admin.setPlan(id, { plan: movedTo(i), ...limitsFor(movedTo(i), i) });
    await admin.ban(id, 15);
    await admin.unban(id);
    await admin.revoke(id);
    await admin.restore(id);
  }
  // And each command once as an admin types it, on a stage target.
  const cli = async (...args: string[]) => {
    const err: string[] = [];
    const code = await runAdmin(
      [...args, '--stage', 'staging'],
      { out: () => {}, err: (l) => err.push(l) },
      async () => deps,
    );
    expect(code, `${args.join(' ')}: ${err.join('\n')}`).toBe(0);
  };
  const id = ids[0]!;
  for (const args of [
    ['create', '--owner', 'scale-cli', '--plan', 'pro'],
    ['rotate', id, '--overlap', '5'],
    ['set-plan', id, 'enterprise', '--per-minute', '600', '--per-day', '60000'],
    ['ban', id, '--minutes', '5'],
    ['unban', id],
    ['revoke', id],
    ['restore', id],
    ['show', id],
    ['usage', id],
    ['history', id],
    ['list', '--owner', 'scale-cli'],
  ])
    await cli('keys', ...args);
  expect(gateway).toEqual({ sent: 0, asked: 0 });
}, 300_000);
