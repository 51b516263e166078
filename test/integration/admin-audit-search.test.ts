/**
 * The history searched across keys (`keys history --since/--until/--actor`) and exported by day (`keys export-history
 * --day`), on DynamoDB Local through the byDay index: what each finds and prints, what it refuses before reading, the
 * entries an earlier release wrote found once `backfillAuditDays` gave them the index's attribute, and a read failing
 * at each of its steps (a Query per UTC day, through a fault proxy) printing nothing of a part and naming the read
 * that finishes it, which then prints everything.
 */
import { parseArgs } from 'node:util';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import {
  AUDIT_DAY_ATTRIBUTE,
  auditItem,
  auditState,
  backfillAuditDays,
  type AuditEntry,
} from '../../lambdas/storage/audit-store.ts';
import {
  auditAdmin,
  exportHistoryCommand,
  historyCommand,
  type AuditAdmin,
  type HistoryFound,
} from '../../lib/admin/audit-search.ts';
import { realDeps } from '../../lib/admin/cli.ts';
import type { CommandArgs, Options } from '../../lib/admin/commands.ts';
import { adminContext } from '../../lib/admin/context.ts';
import { checkKeyId } from '../../lib/admin/rules.ts';
import { AdminError, keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { STAGE_PRINCIPAL, WORLD_START_MS, controlPlaneWorld, type World } from '../helpers/control-plane-world.ts';
import { startFaultProxy, type Fault, type FaultProxy } from '../helpers/fault-proxy.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (t: number) => new Date(t).toISOString();
const dayOf = (t: number) => iso(t).slice(0, 10);

/**
 * A world starting at midnight (UTC) of its own day, weeks apart from every other test's: the tests share the audit
 * table, and a search across keys reads everything in its range.
 */
let worlds = 0;
const worldOwnDays = (): World => controlPlaneWorld(localDeps, WORLD_START_MS - 12 * HOUR + 40 * DAY * ++worlds);

/** One run of a command as the CLI runs it: its arguments bound (checked), then called; what it printed. */
async function run(
  command: (args: CommandArgs) => (admin: AuditAdmin) => Promise<{ human: string; data: unknown }>,
  argv: string[],
  deps: AdminDeps,
) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      since: { type: 'string' },
      until: { type: 'string' },
      actor: { type: 'string' },
      day: { type: 'string' },
    },
  });
  const progress: string[] = [];
  const args: CommandArgs = {
    o: values as Options,
    rest: positionals,
    id: () => checkKeyId(positionals[0]!),
    progress: (line) => progress.push(line),
    answer: () => {},
  };
  const call = command(args);
  const admin = { ...keyAdmin(deps), ...auditAdmin(adminContext(deps)) };
  const out = await call(admin);
  return { ...out, progress };
}

/** The same, expecting the AdminError it fails with. */
async function refused(...a: Parameters<typeof run>): Promise<string> {
  const err = await run(...a).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdminError);
  return (err as Error).message;
}

/** Changes made over three days by two admins on two keys: what every search below picks from. */
async function threeDays(w: World) {
  const start = w.fake.now();
  const bob = keyAdmin(w.deps, { actor: 'bob' });
  const key1 = (await w.admin.create({ owner: w.owner, plan: 'pro' })).record.keyId;
  w.fake.t = start + DAY + 9 * HOUR;
  await bob.setPlan(key1, { plan: 'business' });
  w.fake.t = start + DAY + 10 * HOUR;
  const key2 = (await w.admin.create({ owner: w.owner, plan: 'free' })).record.keyId;
  w.fake.t = start + 2 * DAY + 8 * HOUR;
  await bob.revoke(key2);
  w.fake.t = start + 2 * DAY + 12 * HOUR;
  return { start, key1, key2 };
}

const commands = (f: HistoryFound) => f.entries.map((e) => `${e.keyId} ${e.command} ${e.actor}`);

describe('keys history across keys', () => {
  it('finds every key’s changes in a range, oldest first; --actor picks an admin; without --since, the last 24 hours', async () => {
    const w = worldOwnDays();
    const { start, key1, key2 } = await threeDays(w);
    const all = await run(historyCommand, ['--since', dayOf(start), '--until', dayOf(start + 2 * DAY)], w.deps);
    expect(commands(all.data as HistoryFound)).toEqual([
      `${key1} create --plan pro ${STAGE_PRINCIPAL}`,
      `${key1} set-plan business bob`,
      `${key2} create --plan free ${STAGE_PRINCIPAL}`,
      `${key2} revoke bob`,
    ]);
    expect(all.human.split('\n')).toEqual([
      `Changes from ${iso(start)} to ${iso(start + 3 * DAY - 1)} (UTC), oldest first:`,
      `${iso(start)}  ${key1}  create --plan pro  by ${STAGE_PRINCIPAL}: created on pro (300/min, 10000/day)`,
      `${iso(start + DAY + 9 * HOUR)}  ${key1}  set-plan business  by bob (as ${STAGE_PRINCIPAL}): moved pro (300/min, 10000/day) → business (1000/min, 100000/day)`,
      `${iso(start + DAY + 10 * HOUR)}  ${key2}  create --plan free  by ${STAGE_PRINCIPAL}: created on free (60/min, 1000/day)`,
      expect.stringMatching(new RegExp(`^${iso(start + 2 * DAY + 8 * HOUR)}  ${key2}  revoke  by bob \\(as `)),
    ]);

    // An admin named as the entry names them (--actor), by the credentials' session name (every change here was
    // made with the one role session: bob's too), or not at all.
    const byBob = await run(historyCommand, ['--since', dayOf(start), '--actor', 'BOB'], w.deps);
    expect(commands(byBob.data as HistoryFound)).toEqual([`${key1} set-plan business bob`, `${key2} revoke bob`]);
    const bySession = await run(historyCommand, ['--since', '3d', '--actor', 'alice@example.com'], w.deps);
    expect((bySession.data as HistoryFound).entries).toHaveLength(4);
    const nobody = await run(historyCommand, ['--since', '3d', '--actor', 'carol'], w.deps);
    expect(nobody.human).toBe(
      `No recorded changes from ${iso(start - 12 * HOUR)} to ${iso(start + 2 * DAY + 12 * HOUR)} by carol.`,
    );

    // Default: the 24 hours before now (day 3, noon); a duration and a time with an offset as the tool reads them.
    const lastDay = await run(historyCommand, [], w.deps);
    expect(commands(lastDay.data as HistoryFound)).toEqual([`${key2} revoke bob`]);
    expect(lastDay.data).toMatchObject({
      since: iso(start + DAY + 12 * HOUR),
      until: iso(start + 2 * DAY + 12 * HOUR),
    });
    const since36h = await run(historyCommand, ['--since', '36h'], w.deps);
    expect((since36h.data as HistoryFound).entries).toHaveLength(3);
    const local = `${dayOf(start + DAY)}T11:30+02:00`; // 09:30 UTC: after the set-plan, before the second create
    const fromLocal = await run(historyCommand, ['--since', local, '--until', `${dayOf(start + DAY)}T10:00`], w.deps);
    expect(commands(fromLocal.data as HistoryFound)).toEqual([`${key2} create --plan free ${STAGE_PRINCIPAL}`]);

    // One key: its changes, filtered by the same options; its JSON as before (keyId, entries) with the range asked.
    const one = await run(historyCommand, [key1, '--actor', 'bob'], w.deps);
    expect(one.human).toMatch(/^\S+ {2}set-plan business {2}by bob \(as /);
    expect(one.data).toMatchObject({ keyId: key1, since: null, until: null, actor: 'bob' });
    const whole = await run(historyCommand, [key1], w.deps);
    expect(commands(whole.data as HistoryFound)).toEqual([
      `${key1} create --plan pro ${STAGE_PRINCIPAL}`,
      `${key1} set-plan business bob`,
    ]);
    const none = await run(historyCommand, [key1, '--since', '1h'], w.deps);
    expect(none.human).toBe(`No recorded changes of ${key1} since ${iso(start + 2 * DAY + 11 * HOUR)}.`);
  });

  it('refuses a time it cannot read before connecting, and a range over 31 days naming the first 31', async () => {
    const w = worldOwnDays();
    for (const bad of ['yesterday', '2036-02-30', '2036-01-01T25:00', '5w', '1e3h', ''])
      await expect(run(historyCommand, ['--since', bad], w.deps)).rejects.toThrow(
        /--since ".*" is not a time: give a UTC day/,
      );
    const wide = await refused(historyCommand, ['--since', '2036-01-01', '--until', '2036-03-01'], w.deps);
    expect(wide).toBe(
      '2036-01-01T00:00:00.000Z to 2036-03-01T23:59:59.999Z spans 61 UTC days, and a search across keys reads at ' +
        'most 31 (a query per day): run `keys history --since 2036-01-01T00:00:00.000Z --until ' +
        '2036-01-31T23:59:59.999Z`, then go on from where it ends',
    );
    expect(await refused(historyCommand, ['--since', '2036-01-02', '--until', '2036-01-01'], w.deps)).toMatch(
      /^--since 2036-01-02T00:00:00.000Z is after --until 2036-01-01T23:59:59.999Z/,
    );
    // 31 days exactly is one search.
    const month = await run(historyCommand, ['--since', '2036-01-01', '--until', '2036-01-31'], w.deps);
    expect((month.data as HistoryFound).entries).toEqual([]);
  });
});

describe('keys export-history --day', () => {
  it('prints the day’s entries of every key as JSON lines, oldest first, the count on stderr', async () => {
    const w = worldOwnDays();
    const { start, key1, key2 } = await threeDays(w);
    const day2 = await run(exportHistoryCommand, ['--day', dayOf(start + DAY)], w.deps);
    const lines = day2.human.split('\n').map((l) => JSON.parse(l) as AuditEntry);
    expect(lines.map((e) => `${e.keyId} ${e.command}`)).toEqual([
      `${key1} set-plan business`,
      `${key2} create --plan free`,
    ]);
    // What `keys history <id> --json` prints of each entry: none of the table's bookkeeping, no secret or hash.
    const [h1, h2] = [await w.plain.store.history(key1), await w.plain.store.history(key2)];
    expect(lines).toEqual([h1[1], h2[0]]);
    expect(day2.human).not.toMatch(/hash|expiresAt|atDay|writeId/);
    expect(day2.data).toEqual(lines);
    expect(day2.progress).toEqual([`2 change(s) on ${dayOf(start + DAY)} (UTC)`]);
    const today = await run(exportHistoryCommand, ['--day', dayOf(w.fake.now())], w.deps);
    expect(today.progress).toEqual([`1 change(s) on ${dayOf(w.fake.now())} (UTC), so far: the day is not over`]);
    const empty = await run(exportHistoryCommand, ['--day', dayOf(start - DAY)], w.deps);
    expect([empty.human, empty.progress]).toEqual(['', [`0 change(s) on ${dayOf(start - DAY)} (UTC)`]]);

    expect(await refused(exportHistoryCommand, ['--day', dayOf(w.fake.now() + DAY)], w.deps)).toMatch(/is after today/);
    await expect(run(exportHistoryCommand, [], w.deps)).rejects.toThrow('--day is required');
    await expect(run(exportHistoryCommand, ['--day', '2036-13-01'], w.deps)).rejects.toThrow('is not a day');
  });
});

describe('entries an earlier release wrote', () => {
  it('are found by time once backfillAuditDays gives them the index attribute; a second run changes nothing', async () => {
    const w = worldOwnDays();
    const storage = w.deps.storage!;
    const at = w.fake.now() + HOUR;
    const old: AuditEntry[] = [1, 2].map((v) => ({
      keyId: `key_backfill${v}${w.owner.slice(3, 11)}`,
      at: iso(at + v * 1000),
      command: 'revoke',
      stage: 'staging',
      actor: 'old-admin',
      principal: 'old-admin',
      after: { plan: 'pro', status: 'revoked', version: v },
      result: 'revoked',
    }));
    for (const e of old) {
      const { [AUDIT_DAY_ATTRIBUTE]: _day, ...item } = auditItem(e);
      await storage.doc.send(new PutCommand({ TableName: storage.tables.audit, Item: item }));
    }
    const search = () =>
      run(historyCommand, ['--since', iso(at), '--until', iso(at + HOUR), '--actor', 'old-admin'], w.deps);
    expect((await search()).data).toMatchObject({ entries: [] });
    expect(await backfillAuditDays(storage)).toBe(2);
    expect(((await search()).data as HistoryFound).entries).toEqual(old);
    expect(await backfillAuditDays(storage)).toBe(0);
    // Only the index's attribute was added: the entry is as it was written.
    const item = await storage.doc.send(
      new GetCommand({ TableName: storage.tables.audit, Key: { keyId: old[0]!.keyId, version: 1 } }),
    );
    expect(item.Item).toEqual({ ...auditItem(old[0]!) });
  });

  it('a scope and an expiry are in the entry’s state before and after', () => {
    const r = { keyId: 'key_x', plan: 'pro', status: 'active', scope: 'read', validUntil: 2_000_000_000 } as KeyRecord;
    expect(auditState(r)).toEqual({ plan: 'pro', status: 'active', scope: 'read', validUntil: 2_000_000_000 });
  });
});

describe('a read failing at each of its steps', () => {
  let proxy: FaultProxy;
  let proxied: AdminDeps;
  beforeAll(async () => {
    proxy = await startFaultProxy(api.dynamoEndpoint);
    const was = process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT;
    process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT = proxy.url;
    try {
      proxied = await realDeps({ local: true });
    } finally {
      if (was === undefined) delete process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT;
      else process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT = was;
    }
  });
  afterAll(() => proxy?.close());

  const FAULTS: Fault[] = [
    { kind: 'error', status: 500, type: 'InternalServerError' },
    { kind: 'error', status: 400, type: 'ProvisionedThroughputExceededException' },
    { kind: 'reset' },
  ];

  /** A command failing at its `step`th Query (every retry of it too), then the read its message names. */
  async function failingAt(
    command: Parameters<typeof run>[0],
    argv: string[],
    deps: AdminDeps,
    step: number,
    fault: Fault,
  ) {
    proxy.add({ target: 'Query', skip: step - 1, fault });
    const message = await refused(command, argv, deps).finally(() => proxy.clear());
    const named = /run `keys (history|export-history) ([^`]+)`$/.exec(message);
    expect(named, message).not.toBeNull();
    expect(message).toMatch(/^the history could not be read \(.+\); nothing was changed: run `keys /);
    return run(command, named![2]!.split(' '), deps);
  }

  it('keys history across three days: a Query per day; any one failing prints nothing, and its rerun prints all', async () => {
    const w = worldOwnDays();
    const { start } = await threeDays(w);
    const deps = { ...w.plain, store: proxied.store, storage: proxied.storage };
    const argv = ['--since', '60h'];
    const before = proxy.log.length;
    const clean = await run(historyCommand, argv, deps);
    const queries = proxy.log.slice(before).filter((r) => r.target === 'Query').length;
    expect(queries).toBe(3);
    expect((clean.data as HistoryFound).entries).toHaveLength(4);
    expect(clean.data).toMatchObject({ since: iso(start) });
    for (let step = 1; step <= queries; step++)
      for (const fault of FAULTS) {
        const rerun = await failingAt(historyCommand, argv, deps, step, fault);
        expect(rerun.data, `step ${step}, ${JSON.stringify(fault)}`).toEqual(clean.data);
      }
  }, 120_000);

  it('keys history <id> and keys export-history: their one Query failing, then the read named', async () => {
    const w = worldOwnDays();
    const { start, key1 } = await threeDays(w);
    const deps = { ...w.plain, store: proxied.store, storage: proxied.storage };
    const cleanKey = await run(historyCommand, [key1], deps);
    const cleanDay = await run(exportHistoryCommand, ['--day', dayOf(start + DAY)], deps);
    for (const fault of FAULTS) {
      expect((await failingAt(historyCommand, [key1], deps, 1, fault)).data).toEqual(cleanKey.data);
      expect((await failingAt(exportHistoryCommand, ['--day', dayOf(start + DAY)], deps, 1, fault)).human).toBe(
        cleanDay.human,
      );
    }
  }, 120_000);
});
