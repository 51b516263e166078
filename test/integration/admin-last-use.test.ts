/**
 * Last use, expiry, scope and overlaps as `keys show` and `keys list` print them: requests through the local gateway
 * and its limiter on DynamoDB Local, the admin tool `--local` on the API's clock. The record's new fields are written
 * directly (the commands that set them are tested with them); last use is only what the limiter already wrote.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { adminContext } from '../../lib/admin/context.ts';
import { showLines } from '../../lib/admin/key-lines.ts';
import { list, show } from '../../lib/admin/queries.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { codeOf } from '../helpers/key-standing.ts';

let api: TestApi;
let deps: AdminDeps;
/** The admin tool's DynamoDB requests: command, items asked for (a batch's keys), consistency, capacity reported. */
const calls: Array<{ command: string; items: number; consistent: boolean; capacity: number }> = [];

beforeAll(async () => {
  ({ api, deps } = await startLocalAdminOnApiClock());
  deps.storage!.ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const batch = Object.values(
        (input.RequestItems ?? {}) as Record<string, { Keys: unknown[]; ConsistentRead?: boolean }>,
      );
      const r = await next(args);
      const used = (r.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> })
        .ConsumedCapacity;
      calls.push({
        command: context.commandName ?? '?',
        items: batch.length ? batch.reduce((n, b) => n + b.Keys.length, 0) : 1,
        consistent: batch.length ? !!batch[0]!.ConsistentRead : !!input.ConsistentRead,
        capacity: [used ?? []].flat().reduce((a, c) => a + (c.CapacityUnits ?? 0), 0),
      });
      return r;
    },
    { step: 'initialize', name: 'lastUseMeter' },
  );
});
afterAll(() => api?.close());

const at = (iso: string) => Date.parse(iso);
const sec = (iso: string) => at(iso) / 1000;
const admin = (...args: string[]) => runLocalAdmin(deps, ...args);
async function json(...args: string[]) {
  const r = await admin(...args, '--json');
  expect(r.err).toBe('');
  return JSON.parse(r.out);
}
async function create(owner: string): Promise<{ key: string; keyId: string }> {
  return json('keys', 'create', '--owner', owner, '--plan', 'free', '--another');
}
/**
 * What DynamoDB charges for reads (read units): an item asked for costs 1 (strongly consistent) or 0.5 per 4 KB
 * whether or not it exists; a Query 0.5 per 4 KB read. DynamoDB Local reports found items only.
 */
const readUnits = (c: (typeof calls)[number]) =>
  c.command === 'QueryCommand' ? 0.5 : c.items * (c.consistent ? 1 : 0.5);
async function setFields(keyId: string, changes: Partial<KeyRecord>) {
  const current = (await deps.store.getById(keyId))!;
  await deps.store.update(current, changes);
}

/**
 * An item's size as DynamoDB counts it ("Item sizes and formats"): attribute names and strings in UTF-8 bytes, a
 * number 1 byte plus 1 per two significant digits, a boolean or null 1 byte, a list or map 3 bytes plus 1 per element
 * plus its elements (a map's with their names).
 */
function itemBytes(item: Record<string, unknown>): number {
  const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
  const value = (v: unknown): number => {
    if (typeof v === 'string') return utf8(v);
    if (typeof v === 'number') {
      const digits = String(Math.abs(v)).replace('.', '').replace(/^0+/, '').replace(/0+$/, '') || '0';
      return 1 + Math.ceil(digits.length / 2);
    }
    if (typeof v === 'boolean' || v === null) return 1;
    if (Array.isArray(v)) return 3 + v.reduce((n: number, e) => n + 1 + value(e), 0);
    if (typeof v === 'object')
      return 3 + Object.entries(v as object).reduce((n, [k, e]) => n + 1 + utf8(k) + value(e), 0);
    throw new Error(`no size for ${typeof v}`);
  };
  return Object.entries(item).reduce((n, [k, v]) => n + utf8(k) + value(v), 0);
}

describe('keys show', () => {
  it('prints a running overlap, an expiry, a read-only scope and the minute of the last admitted request', async () => {
    api.clock.set(() => at('2035-02-09T09:14:30Z'));
    const { key, keyId } = await create('acme-four');
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
    await setFields(keyId, {
      scope: 'read',
      validUntil: sec('2035-03-01T00:00:00Z'),
      overlaps: [
        { hash: 'a'.repeat(64), until: sec('2035-02-09T10:00:00Z') },
        // Ended: never printed.
        { hash: 'b'.repeat(64), until: sec('2035-02-09T09:00:00Z') },
      ],
    });
    api.clock.set(() => at('2035-02-09T09:20:00Z'));

    const shown = await json('keys', 'show', keyId);
    expect(shown).toMatchObject({
      keyId,
      scope: 'read',
      expiresAt: '2035-03-01T00:00:00.000Z',
      expired: false,
      overlaps: [{ until: '2035-02-09T10:00:00.000Z' }],
      lastUsedAt: '2035-02-09T09:14:00.000Z',
      lastUseSince: '2035-02-08T00:00:00.000Z',
    });
    expect(JSON.stringify(shown)).not.toContain('a'.repeat(64));

    const lines = showLines(await show(adminContext(deps), keyId));
    expect(lines).toContain(
      "old secret accepted until 2035-02-09T10:00:00.000Z (a rotation's overlap; refused from then)",
    );
    expect(lines).toContain('expires 2035-03-01T00:00:00.000Z: from then every request with it gets 401 key_expired');
    expect(lines).toContain('scope: read (reads only): a request that changes data gets 403 key_read_only');
    expect(lines).toContain('last used 2035-02-09 09:14 UTC');
    expect(lines.join('\n')).not.toContain('b'.repeat(64));
  });

  it('prints the same four through the command line', async () => {
    api.clock.set(() => at('2035-02-09T11:01:10Z'));
    const { key, keyId } = await create('acme-cli');
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
    await setFields(keyId, {
      scope: 'read',
      validUntil: sec('2035-03-01T00:00:00Z'),
      overlaps: [{ hash: 'c'.repeat(64), until: sec('2035-02-09T12:00:00Z') }],
    });
    const out = (await admin('keys', 'show', keyId)).out;
    expect(out).toContain('old secret accepted until 2035-02-09T12:00:00.000Z');
    expect(out).toContain('expires 2035-03-01T00:00:00.000Z');
    expect(out).toContain('scope: read (reads only)');
    expect(out).toContain('last used 2035-02-09 11:01 UTC');
  });

  it('looks back over the days the limiter keeps: yesterday is found, the day before is not read', async () => {
    api.clock.set(() => at('2035-04-01T23:59:10Z'));
    const { key, keyId } = await create('acme-days');
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
    const ctx = adminContext(deps);

    api.clock.set(() => at('2035-04-02T18:00:00Z'));
    expect(await show(ctx, keyId)).toMatchObject({ lastUsedAt: '2035-04-01T23:59:00.000Z' });

    // Its items stay in DynamoDB Local (no TTL there), but they expire from the 3rd on in the cloud: not read.
    api.clock.set(() => at('2035-04-03T00:00:01Z'));
    const none = await show(ctx, keyId);
    expect(none).toMatchObject({ lastUsedAt: null, lastUseSince: '2035-04-02T00:00:00.000Z' });
    expect(showLines(none)).toContain(
      "no use recorded since 2035-04-02 00:00 UTC (the limiter's counts of the last 2 UTC days: nothing older is kept)",
    );
  });

  it('a request the limiter refuses is no use: the minute stays that of the last admitted one', async () => {
    api.clock.set(() => at('2035-05-01T08:00:20Z'));
    const { key, keyId } = await create('acme-refused');
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
    // The day spent, as the limiter's counter says it: the next request is refused by the limiter.
    await api.storage.doc.send(
      new UpdateCommand({
        TableName: api.storage.tables.state,
        Key: shardKey(keyId, sec('2035-05-01T00:00:00Z'), 0),
        UpdateExpression: 'SET d = :d',
        ExpressionAttributeValues: { ':d': PLANS.free.limits!.perDay },
      }),
    );
    api.clock.set(() => at('2035-05-01T08:03:00Z'));
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
    expect(await show(adminContext(deps), keyId)).toMatchObject({ lastUsedAt: '2035-05-01T08:00:00.000Z' });
  });

  it('costs one batch read of 12 limiter items for last use; a key record with every new field is under 1 KB', async () => {
    api.clock.set(() => at('2035-06-01T10:00:00Z'));
    const { key, keyId } = await create('acme-cost');
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
    const rawItem = async () => {
      const { hash } = (await deps.store.getById(keyId))!;
      const out = await api.storage.doc.send(new GetCommand({ TableName: api.storage.tables.keys, Key: { hash } }));
      return out.Item!;
    };
    const before = itemBytes(await rawItem());
    await setFields(keyId, {
      scope: 'read',
      validUntil: sec('2036-06-01T00:00:00Z'),
      overlaps: [{ hash: 'd'.repeat(64), until: sec('2035-06-08T10:00:00Z') }],
    });
    calls.length = 0;
    await show(adminContext(deps), keyId);
    console.log(
      'keys show reads:',
      JSON.stringify(calls),
      `read units in AWS: ${calls.reduce((n, c) => n + readUnits(c), 0)}`,
    );
    // The record (its id's index, then its item), the standing (6 counter items, the gateway's standing item) and
    // last use: 12 items (6 shards x 2 days), eventually consistent, in one request.
    expect(calls.map((c) => `${c.command} ${c.items}${c.consistent ? ' consistent' : ''}`).sort()).toEqual([
      'BatchGetItemCommand 12',
      'BatchGetItemCommand 6 consistent',
      'GetItemCommand 1 consistent',
      'GetItemCommand 1 consistent',
      'QueryCommand 1',
    ]);

    const raw = await rawItem();
    const bytes = itemBytes(raw);
    console.log(
      `key record: ${before} bytes; with scope, validUntil and one overlap: ${bytes} bytes (${Object.keys(raw).join(', ')})`,
    );
    expect(bytes).toBeLessThan(1024);
  });
});

describe('keys list', () => {
  it('--expiring finds the keys that expire within the span or have expired, page by page, with their last use', async () => {
    api.clock.set(() => at('2035-07-01T12:00:00Z'));
    const owner = 'acme-expiring';
    const made: Record<string, string> = {};
    for (const name of ['soon', 'later', 'expired', 'never', 'soon2']) made[name] = (await create(owner)).keyId;
    const now = sec('2035-07-01T12:00:00Z');
    await setFields(made.soon!, { validUntil: now + 3_600 });
    await setFields(made.soon2!, { validUntil: now + 86_400 });
    await setFields(made.later!, { validUntil: now + 10 * 86_400 });
    await setFields(made.expired!, { validUntil: now - 60 });
    // A used key that expires soon: the listing says when it was used.
    const { key, keyId: used } = await create(owner);
    await setFields(used, { validUntil: now + 60 });
    expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');

    const ctx = adminContext(deps);
    const all = await list(ctx, { owner }, { expiringWithin: 86_400 });
    expect(all.keys.map((k) => k.keyId).sort()).toEqual([made.soon, made.soon2, made.expired, used].sort());
    expect(all.keys.find((k) => k.keyId === made.expired)).toMatchObject({ expired: true });
    expect(all.keys.find((k) => k.keyId === used)).toMatchObject({ lastUsedAt: '2035-07-01T12:00:00.000Z' });
    expect(all.keys.find((k) => k.keyId === made.soon)).toMatchObject({
      lastUsedAt: null,
      lastUseSince: '2035-06-30T00:00:00.000Z',
    });
    expect(all.read).toBe(6);

    // One a page: every match once, none skipped.
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await list(ctx, { owner }, { expiringWithin: 86_400, limit: 1, ...(after ? { after } : {}) });
      expect(page.keys.length).toBeLessThanOrEqual(1);
      seen.push(...page.keys.map((k) => k.keyId));
      after = page.next;
    } while (after);
    expect(seen.sort()).toEqual(all.keys.map((k) => k.keyId).sort());

    // Without --expiring, every key of the owner, each with its terms and last use; never an overlap's hash.
    calls.length = 0;
    const plain = await list(ctx, { owner });
    expect(plain.keys).toHaveLength(6);
    expect(plain.read).toBeUndefined();
    expect(plain.keys.every((k) => 'lastUsedAt' in k && 'expiresAt' in k && k.scope === 'all')).toBe(true);
    console.log('keys list page of 6 reads:', JSON.stringify(calls));
    // The listing's queries, then last use: 2 items (a key's shard on 2 days) per key, in one request.
    expect(calls.filter((c) => c.command === 'BatchGetItemCommand')).toEqual([
      expect.objectContaining({ items: 12, consistent: false }),
    ]);
  });
});
