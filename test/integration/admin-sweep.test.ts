/**
 * `keys reconcile --all`, the incident sweep, as an on-call admin runs it over the CLI: it says how far it got on
 * stderr after every page with the command that resumes there, a failed listing read stops it with that command
 * (which then finishes every key, none skipped), a `keys list` cursor is refused (it would skip keys), records
 * written before versioned writes that still name an API key of their own are moved into their pools, and a storage
 * outage on a stage is told as one (no `npm start`). On DynamoDB Local and the fake control plane.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { legacyKey, made } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { controlPlaneWorld, GRACE_MS, problems, recordsOf, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let local: AdminDeps;
beforeAll(async () => {
  ({ api, deps: local } = await startLocalAdmin());
});
afterAll(() => api?.close());

/**
 * `n` Free keys waiting for a reconcile (a change of each not yet applied): the sweep reads 100 keys a page, so 101
 * fill its first page and start the second.
 */
async function pendingKeys(w: World, n = 101) {
  for (let i = 0; i < n; i++) {
    const id = await made(w, 'free');
    await w.plain.store.update((await w.plain.store.getById(id))!, {}, ['reconciledVersion']);
  }
}

/** `w`'s dependencies with the `n`th listing read (1 = the first) throttled, as DynamoDB does once retries are spent. */
function listingFailsAt(w: World, n: number): AdminDeps {
  let calls = 0;
  const store = w.deps.store;
  return {
    ...w.deps,
    store: {
      ...store,
      listPage: async (...args: Parameters<AdminDeps['store']['listPage']>) => {
        if (++calls === n)
          throw Object.assign(new Error('injected throttle'), { name: 'ProvisionedThroughputExceededException' });
        return store.listPage(...args);
      },
    },
  };
}

const RESUME = /`(keys reconcile --all --after (sweep\.[a-z](?:\.[A-Za-z0-9_-]+)?))`/;

describe('keys reconcile --all', () => {
  it('prints its progress on stderr after each page, with the command that resumes there', async () => {
    const w = controlPlaneWorld(local);
    await pendingKeys(w);
    const sweep = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
    expect(sweep.code, sweep.err).toBe(0);
    const lines = sweep.err.split('\n');
    expect(lines[0]).toMatch(
      /^swept 100 key\(s\): 0 changed, 0 failed; if it stops now, `keys reconcile --all --after sweep\.p\.\S+` resumes here$/,
    );
    expect(lines.at(-1)).toBe('swept 101 key(s): 0 changed, 0 failed; done');
    expect(sweep.out).toMatch(/^101 key\(s\) looked at, 0 changed, 0 failed$/m);
    // The cursor a progress line printed resumes after that page (nothing is pending there any more).
    const resumed = await runLocalAdmin(w.deps, ...RESUME.exec(lines[0]!)![1]!.split(' '));
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toMatch(/^0 key\(s\) looked at/m);
    await pendingKeys(w);
    // With --json, each progress line is one JSON object on stderr; stdout stays the one answer.
    const json = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all', '--json');
    expect(json.code).toBe(0);
    const progress = json.err.split('\n').map((l) => JSON.parse(l) as { progress: { seen: number; next?: string } });
    // Two pages of pending keys, then the (empty) page of Enterprise keys.
    expect(progress.map((p) => p.progress.seen)).toEqual([100, 101, 101]);
    expect(progress[0]!.progress.next).toMatch(/^sweep\./);
    expect(JSON.parse(json.out)).toMatchObject({ seen: 101, failed: [] });
  });

  it('a failed listing read stops it with the command that resumes where it stopped, and that command skips no key', async () => {
    const w = controlPlaneWorld(local);
    await pendingKeys(w);
    // Keys from before pools, on the second page (Pro sorts after Free): pending until a sweep reaches them.
    const pending = [await legacyKey(w, 'pro'), await legacyKey(w, 'pro')];
    expect(await problems(w)).not.toEqual([]);
    const human: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(
      ['keys', 'reconcile', '--all', '--local'],
      { out: (l) => human.push(l), err: (l) => err.push(l) },
      async () => listingFailsAt(w, 2),
    );
    expect(code).toBe(1);
    const error = err.at(-1)!;
    expect(error).toMatch(
      /^error: the sweep stopped after 100 key\(s\): reading the listing failed \(ProvisionedThroughputExceededException: injected throttle\): run `keys reconcile --all --after sweep\.\S+` to go on from where it stopped$/,
    );
    expect(human.join('\n')).toMatch(/^Resume: `keys reconcile --all --after sweep\.\S+`$/m);
    // The resume command is the one the last progress line printed, and stdout says it too.
    const next = RESUME.exec(error)![1]!;
    expect(err[0]).toContain(next);
    const resumed = await runLocalAdmin(w.deps, ...next.split(' '));
    expect(resumed.code, resumed.err).toBe(0);
    for (const id of pending) expect(resumed.out).toMatch(new RegExp(`^Reconciled ${id}: moved into its pool`, 'm'));
    w.fake.t += GRACE_MS + 60_000;
    expect((await runLocalAdmin(w.deps, 'keys', 'purge')).code).toBe(0);
    expect(await problems(w)).toEqual([]);
  });

  it('a failed first read names the command that starts it again, in JSON too', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'pro');
    const err: string[] = [];
    const code = await runAdmin(
      ['keys', 'reconcile', '--all', '--local', '--json'],
      { out: () => {}, err: (l) => err.push(l) },
      async () => listingFailsAt(w, 1),
    );
    expect(code).toBe(1);
    expect(JSON.parse(err.at(-1)!)).toEqual({
      error: expect.stringMatching(
        /^the sweep stopped after 0 key\(s\): reading the listing failed .*: run `keys reconcile --all` to go on/,
      ),
      next: 'npm run admin -- keys reconcile --all --local',
    });
  });

  it('refuses a `keys list` cursor (it would skip keys), and `keys list` refuses a sweep cursor', async () => {
    const w = controlPlaneWorld(local);
    for (let i = 0; i < 3; i++) await made(w, 'free');
    const listed = JSON.parse((await runLocalAdmin(w.deps, 'keys', 'list', '--limit', '1', '--json')).out) as {
      next: string;
    };
    expect(listed.next).toBeTruthy();
    const refused = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all', '--after', listed.next);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^error: --after takes the cursor a `keys reconcile --all` printed .*would skip keys/);
    // Nothing was read: it is refused before anything is connected.
    expect(refused.out).toBe('');

    await pendingKeys(w);
    const sweep = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
    const cursor = RESUME.exec(sweep.err)![2]!;
    const list = await runLocalAdmin(w.deps, 'keys', 'list', '--after', cursor);
    expect(list.code).toBe(1);
    expect(list.err).toMatch(/^error: --after: that is a `keys reconcile --all` cursor, not a listing's/);
    // A sweep cursor edited (its position no longer the listing's own) is refused too, not a silent skip.
    const edited = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all', '--after', `${cursor.slice(0, -4)}AAAA`);
    expect(edited.code).toBe(1);
    expect(edited.err).toMatch(/^error: --after: not a cursor of `keys reconcile --all`/);
  });

  it('moves a record written before versioned writes (no version, yet an API key of its own) into its pool', async () => {
    const w = controlPlaneWorld(local);
    const id = await legacyKey(w, 'business');
    const record = (await recordsOf(w)).find((r) => r.keyId === id)!;
    // As the tool wrote records before versions: no version, no reconciled version, no write id.
    await w.plain.storage!.doc.send(
      new UpdateCommand({
        TableName: w.plain.storage!.tables.keys,
        Key: { hash: record.hash },
        UpdateExpression: 'REMOVE version, reconciledVersion, writeId',
      }),
    );
    expect(await problems(w)).toEqual([`${id} still names an API key or usage plan of its own`]);
    const listed = await runLocalAdmin(w.deps, 'keys', 'show', id, '--json');
    expect(JSON.parse(listed.out)).toMatchObject({ pending: false });
    // Nothing says it is pending: `keys reindex` (run once after a release that changes the listing) puts it in the
    // partition the sweep reads.
    expect((await runLocalAdmin(w.deps, 'keys', 'reindex')).code).toBe(0);
    const sweep = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
    expect(sweep.code, sweep.err).toBe(0);
    expect(sweep.out).toMatch(new RegExp(`^Reconciled ${id}: moved into its pool`, 'm'));
    w.fake.t += GRACE_MS + 60_000;
    expect((await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all')).code).toBe(0);
    expect(await problems(w)).toEqual([]);
  });

  it('reads no key but the Enterprise ones when nothing is pending, and only the pending ones besides', async () => {
    const w = controlPlaneWorld(local);
    for (let i = 0; i < 30; i++) await made(w, i % 2 ? 'free' : 'pro');
    await made(w, 'enterprise', { perMinute: 600, perDay: 50_000 });
    let read = 0;
    const counted: AdminDeps = {
      ...w.deps,
      store: {
        ...w.deps.store,
        listPage: async (...args: Parameters<AdminDeps['store']['listPage']>) => {
          const out = await w.deps.store.listPage(...args);
          read += out.read;
          return out;
        },
      },
    };
    const idle = await runLocalAdmin(counted, 'keys', 'reconcile', '--all');
    expect(idle.code, idle.err).toBe(0);
    expect(idle.out).toBe('1 key(s) looked at, 0 changed, 0 failed');
    expect(read, 'items the listing read').toBe(1);
    await pendingKeys(w, 2);
    read = 0;
    const busy = await runLocalAdmin(counted, 'keys', 'reconcile', '--all');
    expect(busy.code, busy.err).toBe(0);
    expect(busy.out).toBe('3 key(s) looked at, 0 changed, 0 failed');
    expect(read).toBe(3);
    // Reconciled, they leave the pending partition: the next sweep is idle again.
    read = 0;
    expect((await runLocalAdmin(counted, 'keys', 'reconcile', '--all')).out).toBe(
      '1 key(s) looked at, 0 changed, 0 failed',
    );
    expect(read).toBe(1);
  });
});

describe('keys purge', () => {
  it('run again after a purge that stopped part-way, finishes the key it left pending', async () => {
    const w = controlPlaneWorld(local);
    const id = await legacyKey(w, 'pro');
    await w.plain.store.update((await w.plain.store.getById(id))!, {
      status: 'revoked',
      revokedAt: new Date(w.fake.t).toISOString(),
    });
    w.fake.t += GRACE_MS + 60_000;
    // The purge stops (a crash) at its last write for the key: the gateway is clean, the record not yet reconciled,
    // and nothing of it waits for purge any more.
    const crashing: AdminDeps = {
      ...w.deps,
      store: {
        ...w.deps.store,
        update: async (...args: Parameters<AdminDeps['store']['update']>) => {
          if (args[1].reconciledVersion !== undefined) throw new Error('the process died here (test)');
          return w.deps.store.update(...args);
        },
      },
    };
    expect((await runLocalAdmin(crashing, 'keys', 'purge')).code).toBe(1);
    expect(JSON.parse((await runLocalAdmin(w.deps, 'keys', 'show', id, '--json')).out)).toMatchObject({
      status: 'revoked',
      pending: true,
    });
    const again = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(again).toMatchObject({ code: 0, out: `Finished ${id}, left part-way by a purge that stopped` });
    expect(JSON.parse((await runLocalAdmin(w.deps, 'keys', 'show', id, '--json')).out)).toMatchObject({
      pending: false,
    });
    expect(await problems(w)).toEqual([]);
    expect((await runLocalAdmin(w.deps, 'keys', 'purge')).out).toBe('Nothing to purge.');
  });
});

describe('a storage outage on a stage', () => {
  it('says where to look for that target, with the command to run again, and never `npm start`', async () => {
    const down = async () => {
      throw new UnavailableError('ECONNREFUSED');
    };
    const deps = { ...local, store: { ...local.store, getById: down, getByIdConsistent: down } } as AdminDeps;
    for (const json of [false, true]) {
      const err: string[] = [];
      const code = await runAdmin(
        ['keys', 'show', 'key_abc', '--stage', 'staging', ...(json ? ['--json'] : [])],
        { out: () => {}, err: (l) => err.push(l) },
        async () => deps,
      );
      expect(code).toBe(1);
      const message = json ? (JSON.parse(err[0]!) as { error: string; next: string }) : { error: err[0]! };
      expect(message.error).toMatch(
        /DynamoDB did not answer \(ECONNREFUSED\) on stage staging: check the network and your AWS credentials/,
      );
      expect(message.error).not.toMatch(/npm start|--local/);
      if (json) expect(message).toMatchObject({ next: 'npm run admin -- keys show key_abc --stage staging --json' });
    }
  });
});
