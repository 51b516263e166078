/**
 * The DynamoDB adapter for API keys (the authorizer's lookup, and the admin tool's records).
 *
 * Admin writes are conditional on the record's version (optimistic concurrency), and each recognises its own
 * earlier success: the SDK resends a request whose answer was lost, and the resent condition then fails on the
 * write it already made.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StaleKeyRecordError, type KeyOverlapRef, type KeyRecord, type KeyStore } from '../domain/keys.ts';
import { UnavailableError } from '../domain/errors.ts';
import { guarded, withStorage, type Storage } from './client.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';
import { readStanding, standingWrites, type StandingChange, type TransactItem } from './standing-admin.ts';
import { listKeys, listing, reindexKeys, withoutListing, type ListFilter } from './key-listing.ts';
import { auditItem, backfillAuditDays, readHistory, type AuditEntry } from './audit-store.ts';

/**
 * The history entry of an admin write, from the record the write leaves (audit-store.ts): put in the same
 * transaction as the write, so the change and its entry land together or not at all.
 */
export type AuditOf = (after: KeyRecord) => AuditEntry;

/**
 * What an admin write puts in its transaction beside the record: its history entry, and what it changes of the key's
 * standing and counters (standing-admin.ts) as of `at` (ms: the admin's clock).
 */
export interface WriteWith {
  readonly audit?: AuditOf;
  readonly standing?: { readonly change: StandingChange; readonly at: number };
}

/** The transaction's items beside the record for a write that leaves `after` (under `hash`). */
async function alongside(storage: Storage, after: KeyRecord, hash: string, w: WriteWith): Promise<TransactItem[]> {
  return [
    ...(w.audit ? [auditPut(storage, w.audit(after))] : []),
    ...(w.standing ? await standingWrites(storage, after.keyId, hash, w.standing.change, w.standing.at) : []),
  ];
}

/** The audit table's Put of an entry, for a transaction. */
const auditPut = (storage: Storage, entry: AuditEntry) => ({
  Put: {
    TableName: storage.tables.audit,
    Item: auditItem(entry),
    ConditionExpression: 'attribute_not_exists(#v)',
    ExpressionAttributeNames: { '#v': 'version' },
  },
});

const BY_KEY_ID = KEYS_TABLE.indexes[0].indexName;

/** A key record by the hash of its secret, read consistently (a revocation shows at once). */
async function getByHash({ doc, tables }: Storage, hash: string): Promise<KeyRecord | undefined> {
  const out = await guarded(() =>
    doc.send(new GetCommand({ TableName: tables.keys, Key: { hash }, ConsistentRead: true })),
  );
  return out.Item as KeyRecord | undefined;
}

/** The authorizer's lookup. */
export function createKeyStore(storage: Storage): KeyStore {
  return { getByHash: (hash) => getByHash(storage, hash) };
}

/** `version = :ver` for the version read (records from before versions: no version attribute). */
function versionIs(record: KeyRecord, names: Record<string, string>, values: Record<string, unknown>): string {
  names['#ver'] = 'version';
  if (!record.version) return 'attribute_not_exists(#ver)';
  values[':ver'] = record.version;
  return '#ver = :ver';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a conditional write. When it fails, either on its condition (a resend that finds its own earlier write) or
 * with no answer at all (UnavailableError after the SDK's attempts: applied or not, nobody knows), `ownWrite` reads
 * back whether this very write is in place: then it succeeded. A failed condition otherwise means another write came
 * first (`conflict`); an unknown outcome that did not apply is rethrown.
 */
async function idempotent<T>(
  send: () => Promise<T>,
  ownWrite: (err: unknown) => Promise<T | undefined>,
  conflict: () => Error,
): Promise<T> {
  try {
    return await send();
  } catch (err) {
    const conditional = err instanceof ConditionalCheckFailedException || err instanceof TransactionCanceledException;
    if (!conditional && !(err instanceof UnavailableError)) throw err;
    const mine = await ownWrite(err).catch(() => undefined);
    if (mine !== undefined) return mine;
    throw conditional ? conflict() : err;
  }
}

/** Writes a new record; a resent put that finds its own record (same key id) succeeds. */
async function put(storage: Storage, record: KeyRecord, audit?: AuditOf): Promise<void> {
  const { doc, tables } = storage;
  const write = {
    TableName: tables.keys,
    Item: { ...record, ...listing(record) },
    ConditionExpression: 'attribute_not_exists(#h)',
    ExpressionAttributeNames: { '#h': 'hash' },
  };
  await idempotent(
    () =>
      guarded<unknown>(() =>
        audit
          ? doc.send(
              new TransactWriteCommand({
                TransactItems: [{ Put: write }, auditPut(storage, audit(record))],
              }),
            )
          : doc.send(new PutCommand(write)),
      ).then(() => true),
    async () => ((await getByHash(storage, record.hash))?.keyId === record.keyId ? true : undefined),
    () => new StaleKeyRecordError(record.keyId),
  );
}

/** Upserts a record (local development keys given by ANIMAL_STORE_DEV_KEYS). */
async function upsert(storage: Storage, record: KeyRecord): Promise<void> {
  const { doc, tables } = storage;
  await guarded(() => doc.send(new PutCommand({ TableName: tables.keys, Item: { ...record, ...listing(record) } })));
}

/**
 * The current record of a key id. The byKeyId index is eventually consistent: right after a rotation it may still
 * name the old hash (or both), so each hash it names is re-read consistently, and the query is repeated briefly
 * when none of them exists any more.
 */
async function getById(storage: Storage, keyId: string): Promise<KeyRecord | undefined> {
  const { doc, tables } = storage;
  for (let attempt = 0; attempt < 6; attempt++) {
    if (attempt) await sleep(100 * attempt);
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tables.keys,
          IndexName: BY_KEY_ID,
          KeyConditionExpression: 'keyId = :k',
          ExpressionAttributeValues: { ':k': keyId },
        }),
      ),
    );
    const hashes = ((out.Items ?? []) as KeyRecord[]).map((i) => i.hash);
    if (!hashes.length) return undefined;
    for (const hash of hashes) {
      const record = await getByHash(storage, hash);
      // The index may still name a hash a rotation turned into an overlap item (no key id): not this key's record.
      if (record?.keyId === keyId) return record;
    }
  }
  return undefined;
}

/** Every record (through the listing index, all partitions: still every item; `keys list` pages instead). */
async function list(storage: Storage): Promise<KeyRecord[]> {
  const records: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await listKeys(storage, {}, 1000, after);
    records.push(...page.records);
    after = page.next;
  } while (after);
  return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * Changes the record that was read (`current`), if it is still that version, with what goes with it (`with_`) in the
 * same transaction; StaleKeyRecordError when another write came first (the record, or an item of the key's standing
 * or counters the change read: standing-admin.ts), or the key was rotated away. Returns the new record.
 */
async function update(
  storage: Storage,
  current: KeyRecord,
  changes: Partial<Omit<KeyRecord, 'hash' | 'keyId' | 'version' | 'writeId'>>,
  remove: string[] = [],
  with_: WriteWith = {},
): Promise<KeyRecord> {
  const { doc, tables } = storage;
  const writeId = randomUUID();
  const names: Record<string, string> = { '#h': 'hash', '#wid': 'writeId' };
  const values: Record<string, unknown> = { ':next': (current.version ?? 0) + 1, ':wid': writeId };
  const condition = `attribute_exists(#h) AND ${versionIs(current, names, values)}`;
  const sets = Object.entries(changes)
    .filter(([, v]) => v !== undefined)
    .map(([k, v], i) => {
      names[`#a${i}`] = k;
      values[`:v${i}`] = v;
      return `#a${i} = :v${i}`;
    });
  // The listing index follows the record (key-listing.ts): computed from the record this write leaves.
  const given = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
  const after = withoutListing({ ...current, ...given } as KeyRecord);
  for (const k of remove) delete (after as unknown as Record<string, unknown>)[k];
  const index = listing({ ...after, version: (current.version ?? 0) + 1 });
  names['#lk'] = 'listKey';
  names['#ls'] = 'listSort';
  values[':lk'] = index.listKey;
  values[':ls'] = index.listSort;
  sets.push('#ver = :next', '#wid = :wid', '#lk = :lk', '#ls = :ls');
  const removes = remove.map((k, i) => {
    names[`#r${i}`] = k;
    return `#r${i}`;
  });
  const expr = [`SET ${sets.join(', ')}`, removes.length ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  const write = {
    TableName: tables.keys,
    Key: { hash: current.hash },
    UpdateExpression: expr,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  return idempotent(
    async () => {
      // A transaction returns no item: the record it leaves is the one computed above, version and write id set.
      const next = { ...after, version: (current.version ?? 0) + 1, writeId } as KeyRecord;
      const others = await alongside(storage, next, current.hash, with_);
      if (others.length) {
        await guarded(() => doc.send(new TransactWriteCommand({ TransactItems: [{ Update: write }, ...others] })));
        return next;
      }
      const out = await guarded(() => doc.send(new UpdateCommand({ ...write, ReturnValues: 'ALL_NEW' })));
      return withoutListing(out.Attributes as KeyRecord);
    },
    // Our own write, resent after its answer was lost: it is applied (and nobody wrote after it).
    async () => {
      const now = await getByHash(storage, current.hash);
      return now?.writeId === writeId ? withoutListing(now) : undefined;
    },
    () => new StaleKeyRecordError(current.keyId),
  );
}

/**
 * Rotation: replaces `current` (if still that version) by `next` under a new hash in one transaction, so the old
 * secret stops as the new one starts. A resent transaction that finds `next` written succeeds (only this call knows
 * the new hash); any other conflict is StaleKeyRecordError.
 * `overlapUntil` (unix seconds) keeps the old secret working until then: its item becomes a `KeyOverlap` (keys.ts)
 * naming the new hash, so a revoke, plan change or ban applies to it too. It has no key id (no index lists it,
 * `getById` never finds it); TTL removes it a day after, and the authorizer refuses it from `overlapUntil` on.
 * `carried`: earlier overlaps still running, repointed in the same transaction: a second rotation keeps the first's.
 */
async function replaceHash(
  storage: Storage,
  current: KeyRecord,
  next: KeyRecord,
  options: WriteWith & { overlapUntil?: number; carried?: readonly KeyOverlapRef[] } = {},
): Promise<void> {
  const { doc, tables } = storage;
  const names: Record<string, string> = { '#h': 'hash' };
  const values: Record<string, unknown> = {};
  const condition = `attribute_exists(#h) AND ${versionIs(current, names, values)}`;
  const guard = {
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
  const { overlapUntil } = options;
  const old = overlapUntil
    ? {
        Put: {
          TableName: tables.keys,
          Item: { hash: current.hash, overlapOf: next.hash, overlapUntil, expiresAt: overlapUntil + 86_400 },
          ...guard,
        },
      }
    : { Delete: { TableName: tables.keys, Key: { hash: current.hash }, ...guard } };
  // An item still pointing at the current hash (or gone: its overlap ended and TTL took it) is pointed at the new one.
  const moved = (options.carried ?? []).map((o) => ({
    Put: {
      TableName: tables.keys,
      Item: { hash: o.hash, overlapOf: next.hash, overlapUntil: o.until, expiresAt: o.until + 86_400 },
      ConditionExpression: 'attribute_not_exists(#h) OR #o = :cur',
      ExpressionAttributeNames: { '#h': 'hash', '#o': 'overlapOf' },
      ExpressionAttributeValues: { ':cur': current.hash },
    },
  }));
  await idempotent(
    async () => {
      // What goes with it is the new secret's: its standing starts there.
      const others = await alongside(storage, next, next.hash, options);
      return guarded(() =>
        doc.send(
          new TransactWriteCommand({
            TransactItems: [
              old,
              ...moved,
              ...others,
              {
                Put: {
                  TableName: tables.keys,
                  Item: { ...withoutListing(next), ...listing(next) },
                  ConditionExpression: 'attribute_not_exists(#h)',
                  ExpressionAttributeNames: { '#h': 'hash' },
                },
              },
            ],
          }),
        ),
      ).then(() => true);
    },
    // Only this call knows the new hash: a record under it is this rotation, applied.
    async () => ((await getByHash(storage, next.hash))?.keyId === next.keyId ? true : undefined),
    () => new StaleKeyRecordError(current.keyId),
  );
}

/** Admin operations on key records (the admin tool and the local server's development keys). */
export function createKeyAdminStore(storage: Storage) {
  return {
    put: withStorage(storage, put),
    upsert: withStorage(storage, upsert),
    getById: async (keyId: string) => {
      const record = await getById(storage, keyId);
      return record && withoutListing(record);
    },
    list: withStorage(storage, list),
    listPage: (filter: ListFilter, limit: number, after?: string) => listKeys(storage, filter, limit, after),
    reindex: () => reindexKeys(storage),
    reindexHistory: () => backfillAuditDays(storage),
    update: withStorage(storage, update),
    replaceHash: withStorage(storage, replaceHash),
    history: (keyId: string) => readHistory(storage, keyId),
    readStanding: (hash: string) => readStanding(storage, hash),
  };
}
