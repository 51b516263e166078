/**
 * The admin tool's history of changes to keys, on the audit table (contract/tables.ts AUDIT_TABLE): one item per
 * change, written in the same transaction as the key record it describes (key-store.ts), so a change without its
 * entry, or an entry of a change that did not land, cannot exist. Items are only ever put, never updated: nothing the
 * tool does rewrites history. What an entry holds is chosen field by field (auditState): never a secret, its hash or
 * a write id, so a leaked history grants nothing and names no item a request could be replayed against.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import { AUDIT_TABLE } from '../../contract/tables.ts';
import type { KeyRecord, KeyScope, KeyStatus } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';

/** How long an entry is kept (the table's TTL deletes it after): a year and a month, past a yearly review. */
export const AUDIT_RETENTION_DAYS = 400;

/** What an entry says of a key, before or after a change: what an admin changes and support is asked about. */
export interface AuditState {
  readonly plan: PlanName;
  readonly limits?: PlanLimits;
  readonly status: KeyStatus;
  readonly revokedAt?: string;
  readonly rotatedAt?: string;
  /** An admin's ban (unix seconds). */
  readonly bannedUntil?: number;
  /** Bans ending by then are lifted (unix seconds). */
  readonly unbannedThrough?: number;
  /** `read`: the key may only read; absent: every operation. */
  readonly scope?: KeyScope;
  /** When the key expires (unix seconds); absent: never. */
  readonly validUntil?: number;
  readonly version?: number;
}

/** The key's standing as the command read it (the limiter's and the gateway's), where it read it. */
export interface AuditStanding {
  readonly bannedUntil?: string;
  readonly daySpentUntil?: string;
}

/** Who made a change. */
export interface AuditActor {
  /** Who the entry names: `--actor` when given, else the principal or the OS user. */
  readonly actor: string;
  /** The AWS principal (STS GetCallerIdentity's ARN) on a stage; locally the OS user (`local:<name>`). */
  readonly principal: string;
}

/** One change, as `keys history` prints it. */
export interface AuditEntry extends AuditActor {
  readonly keyId: string;
  /** ISO time of the change. */
  readonly at: string;
  /** The command (`set-plan`, `revoke`…) and its arguments, without any secret (none is ever an argument). */
  readonly command: string;
  readonly stage: string;
  readonly before?: AuditState;
  readonly after: AuditState;
  readonly standingBefore?: AuditStanding;
  /** What the change did, in a line. */
  readonly result: string;
}

/** The fields of a record an entry keeps: explicitly chosen, so a field added to records later is not copied in. */
export function auditState(r: KeyRecord): AuditState {
  const pick = {
    plan: r.plan,
    limits: r.limits,
    status: r.status,
    revokedAt: r.revokedAt,
    rotatedAt: r.rotatedAt,
    bannedUntil: r.bannedUntil,
    unbannedThrough: r.unbannedThrough,
    scope: r.scope,
    validUntil: r.validUntil,
    version: r.version,
  };
  return Object.fromEntries(Object.entries(pick).filter(([, v]) => v !== undefined)) as unknown as AuditState;
}

/**
 * The byDay index (contract/tables.ts AUDIT_TABLE): entries of every key by the UTC day of their change, sorted by
 * its time, so `keys history --since` and `keys export-history` read a day in one Query instead of every key's
 * history.
 */
const BY_DAY = AUDIT_TABLE.indexes[0];
/** The index's partition attribute: the UTC day (`YYYY-MM-DD`) of the entry's `at`. */
export const AUDIT_DAY_ATTRIBUTE = BY_DAY.partitionKey.name;

/** The UTC day (`YYYY-MM-DD`) of an ISO time. */
export const utcDay = (iso: string): string => new Date(Date.parse(iso)).toISOString().slice(0, 10);

/**
 * The item of an entry: sorted by the version the change wrote (each version is written once: a conditional write),
 * listed under the UTC day of its change (the byDay index), deleted by the table's TTL AUDIT_RETENTION_DAYS after
 * the change.
 */
export function auditItem(entry: AuditEntry): Record<string, unknown> {
  const expiresAt = Math.floor(Date.parse(entry.at) / 1000) + AUDIT_RETENTION_DAYS * 86_400;
  return { ...entry, version: entry.after.version ?? 0, expiresAt, [AUDIT_DAY_ATTRIBUTE]: utcDay(entry.at) };
}

/** An item read back as the entry it was written from: the table's bookkeeping left out. */
function entryOfItem(item: Record<string, unknown>): AuditEntry {
  const { expiresAt: _exp, version: _v, [AUDIT_DAY_ATTRIBUTE]: _day, ...entry } = item;
  return entry as unknown as AuditEntry;
}

/** Every entry a Query of the audit table (or its index) returns, in its order, page after page. */
async function queryEntries(
  { doc, tables }: Storage,
  query: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName' | 'ExclusiveStartKey'>,
): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(new QueryCommand({ ...query, TableName: tables.audit, ...(start ? { ExclusiveStartKey: start } : {}) })),
    );
    for (const item of out.Items ?? []) entries.push(entryOfItem(item));
    start = out.LastEvaluatedKey;
  } while (start);
  return entries;
}

/** A key's history, oldest first (one Query, paged). */
export const readHistory = (storage: Storage, keyId: string): Promise<AuditEntry[]> =>
  queryEntries(storage, { KeyConditionExpression: 'keyId = :k', ExpressionAttributeValues: { ':k': keyId } });

/** The longest range `searchHistory` reads at once: a month, a Query per UTC day. */
export const MAX_SEARCH_DAYS = 31;

/** What `keys history` without a key id reads: entries of every key changed in [since, until] (ms), by whom. */
export interface HistorySearch {
  /** Epoch ms, inclusive. */
  readonly since: number;
  /** Epoch ms, inclusive. */
  readonly until: number;
  /** Only entries this predicate keeps (an actor's); absent: every entry. */
  readonly keep?: (entry: AuditEntry) => boolean;
}

/** The UTC days (`YYYY-MM-DD`) from the one of `since` to the one of `until` (ms), in order. */
export function utcDays(since: number, until: number): string[] {
  const days: string[] = [];
  for (let t = Math.floor(since / 86_400_000) * 86_400_000; t <= until; t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/**
 * Entries of every key changed in [since, until], oldest first: one Query of the byDay index per UTC day in the
 * range (paged), bounded to MAX_SEARCH_DAYS days so a typo cannot read a year. The index is eventually consistent:
 * a change made in the last second may be missing. Entries written before the index existed are found once
 * `backfillAuditDays` has given them its attribute.
 */
export async function searchHistory(storage: Storage, q: HistorySearch): Promise<AuditEntry[]> {
  if (!(q.since <= q.until)) throw new RangeError('searchHistory: since is after until');
  const days = utcDays(q.since, q.until);
  if (days.length > MAX_SEARCH_DAYS)
    throw new RangeError(`searchHistory: ${days.length} days, more than ${MAX_SEARCH_DAYS}`);
  const from = new Date(q.since).toISOString();
  const to = new Date(q.until).toISOString();
  const entries: AuditEntry[] = [];
  for (const day of days) entries.push(...(await readDay(storage, day, from, to)).filter((e) => q.keep?.(e) ?? true));
  return entries;
}

/** A UTC day's entries of every key (`YYYY-MM-DD`), oldest first: one Query of the byDay index, paged. */
export const readAuditDay = (storage: Storage, day: string): Promise<AuditEntry[]> =>
  readDay(storage, day, `${day}T00:00:00.000Z`, `${day}T23:59:59.999Z`);

const readDay = (storage: Storage, day: string, from: string, to: string): Promise<AuditEntry[]> =>
  queryEntries(storage, {
    IndexName: BY_DAY.indexName,
    // `at` is a DynamoDB reserved word.
    KeyConditionExpression: '#d = :d AND #at BETWEEN :from AND :to',
    ExpressionAttributeNames: { '#d': AUDIT_DAY_ATTRIBUTE, '#at': BY_DAY.sortKey.name },
    ExpressionAttributeValues: { ':d': day, ':from': from, ':to': to },
  });

/**
 * Gives the entries written before the byDay index existed its attribute (the UTC day of their `at`), so a search
 * by time finds them; how many it gave. One Scan of the table, paged, and an update per entry lacking it. The one
 * change the tool makes to an entry after its put: it adds the index's attribute only, conditional on the entry
 * still lacking it, so what the entry says is never rewritten and a second run (or two at once) changes nothing.
 */
export async function backfillAuditDays(storage: Storage): Promise<number> {
  const { doc, tables } = storage;
  let updated = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(
        new ScanCommand({
          TableName: tables.audit,
          FilterExpression: 'attribute_not_exists(#d)',
          ProjectionExpression: 'keyId, version, #at',
          ExpressionAttributeNames: { '#d': AUDIT_DAY_ATTRIBUTE, '#at': BY_DAY.sortKey.name },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const item of (out.Items ?? []) as Array<{ keyId: string; version: number; at?: string }>) {
      const at = item.at;
      if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) continue;
      const done = await guarded(() =>
        doc.send(
          new UpdateCommand({
            TableName: tables.audit,
            Key: { keyId: item.keyId, version: item.version },
            UpdateExpression: 'SET #d = :d',
            ConditionExpression: 'attribute_exists(keyId) AND attribute_not_exists(#d)',
            ExpressionAttributeNames: { '#d': AUDIT_DAY_ATTRIBUTE },
            ExpressionAttributeValues: { ':d': utcDay(at) },
          }),
        ),
      ).then(
        () => true,
        (err: unknown) => {
          // Given it meanwhile (another run), or deleted by the TTL: nothing to do.
          if (err instanceof ConditionalCheckFailedException) return false;
          throw err;
        },
      );
      if (done) updated++;
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return updated;
}
