/**
 * Listing keys at a million: the admin tool's `keys list` and `keys purge` read the keys table through one index,
 * `byListing` (contract/tables.ts), never a Scan. Every record carries two attributes the key store writes with it:
 * - `listKey` = `<plan>#<status>`, `listSort` = `<owner, lower case>\u0001<createdAt>\u0001<keyId>`, so a plan, a
 *   status, or both name one to eight partitions, and an owner is a `begins_with` on each: every item read is one
 *   returned;
 * - except while a record has something for purge to delete in API Gateway (revoked with an API key or usage plan
 *   left, or a usage plan it moved off): then `listKey` = `purge`, `listSort` = `<due time>\u0001<keyId>`, so purge
 *   reads exactly what is due. That partition is small (keys revoked in the last minutes, failures) and is read, and
 *   filtered, with every listing.
 * One index, because CloudFormation adds at most one global secondary index to a table per update. Owners match
 * case-insensitively and exactly (Unicode NFKC, lower case); `\u0001` cannot occur in an owner (control characters
 * are refused), so `acme` never matches `acme#2`.
 */
import { QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PLANS, type PlanName } from '../../contract/plans.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';
import type { KeyRecord, KeyStatus } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';

const BY_LISTING = KEYS_TABLE.indexes[1].indexName;
const SEP = '\u0001';
const PURGE = 'purge';
const STATUSES: readonly KeyStatus[] = ['active', 'revoked'];

/** How `--owner` matches: case-insensitively, Unicode-normalized. */
export const ownerKey = (owner: string) => owner.trim().normalize('NFKC').toLowerCase();

/** Whether a record waits for purge (and since when, ISO; '' = at once). */
function purgeDueAt(r: KeyRecord) {
  if (r.retiredUsagePlanId || r.retiredApiKeyId) return r.retiredAt ?? '';
  if (r.status === 'revoked' && (r.apiGatewayKeyId || r.usagePlanId)) return r.revokedAt ?? r.createdAt;
  return undefined;
}

/** The index attributes of a record, written with it. */
export function listing(r: KeyRecord): { listKey: string; listSort: string } {
  const due = purgeDueAt(r);
  if (due !== undefined) return { listKey: PURGE, listSort: `${due}${SEP}${r.keyId}` };
  return { listKey: `${r.plan}#${r.status}`, listSort: `${ownerKey(r.owner)}${SEP}${r.createdAt}${SEP}${r.keyId}` };
}

/** A record as the domain knows it: without the index attributes. */
export const withoutListing = ({ listKey: _k, listSort: _s, ...r }: KeyRecord & Partial<ReturnType<typeof listing>>) =>
  r as KeyRecord;

export interface ListFilter {
  readonly plan?: PlanName;
  readonly owner?: string;
  readonly status?: KeyStatus;
}

export interface ListPage {
  readonly records: KeyRecord[];
  /** Where the next page starts (`after` of the next call); absent: no more. */
  readonly next?: string;
  /** Items DynamoDB read for this page (ScannedCount), for the bench. */
  readonly read: number;
}

interface Cursor {
  /** Index into the partitions of the filter. */
  p: number;
  start?: Record<string, unknown>;
}

const encode = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(after: string | undefined): Cursor {
  if (!after) return { p: 0 };
  try {
    const c = JSON.parse(Buffer.from(after, 'base64url').toString()) as Cursor;
    if (Number.isInteger(c.p) && c.p >= 0) return c;
  } catch {
    // an unreadable cursor is refused below
  }
  throw new RangeError('not a cursor of `keys list`');
}

/** The filter's partitions: the purge partition first (filtered), then `<plan>#<status>` for each match. */
function partitions(f: ListFilter): string[] {
  const plans = f.plan ? [f.plan] : (Object.keys(PLANS) as PlanName[]);
  const statuses = f.status ? [f.status] : STATUSES;
  return [PURGE, ...plans.flatMap((p) => statuses.map((s) => `${p}#${s}`))];
}

/** Up to `limit` records matching the filter, in partition order (owner, then creation time within one). */
export async function listKeys(
  { doc, tables }: Storage,
  filter: ListFilter,
  limit: number,
  after?: string,
): Promise<ListPage> {
  const parts = partitions(filter);
  const cursor = decode(after);
  const records: KeyRecord[] = [];
  let read = 0;
  let { p, start } = cursor;
  const owner = filter.owner === undefined ? undefined : ownerKey(filter.owner);
  while (p < parts.length && records.length < limit) {
    const purge = parts[p] === PURGE;
    const values: Record<string, unknown> = { ':k': parts[p] };
    let condition = 'listKey = :k';
    if (!purge && owner !== undefined) {
      condition += ' AND begins_with(listSort, :o)';
      values[':o'] = `${owner}${SEP}`;
    }
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tables.keys,
          IndexName: BY_LISTING,
          KeyConditionExpression: condition,
          ExpressionAttributeValues: values,
          ...(start ? { ExclusiveStartKey: start } : {}),
          // The purge partition is read whole and filtered here (it is small); the others return what they read.
          ...(purge ? {} : { Limit: limit - records.length }),
        }),
      ),
    );
    read += out.ScannedCount ?? 0;
    for (const item of (out.Items ?? []) as KeyRecord[]) {
      const match =
        !purge ||
        ((!filter.plan || item.plan === filter.plan) &&
          (!filter.status || item.status === filter.status) &&
          (owner === undefined || ownerKey(item.owner) === owner));
      if (match) records.push(withoutListing(item));
    }
    start = out.LastEvaluatedKey;
    if (!start) p++;
  }
  const more = p < parts.length;
  return { records, read, ...(more ? { next: encode({ p, ...(start ? { start } : {}) }) } : {}) };
}

/** Records waiting for purge whose time has come (`cutoff`, ms): a query on the purge partition, nothing else. */
export async function listPurgeDue({ doc, tables }: Storage, cutoff: number): Promise<KeyRecord[]> {
  const items: KeyRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tables.keys,
          IndexName: BY_LISTING,
          KeyConditionExpression: 'listKey = :k AND listSort < :upto',
          ExpressionAttributeValues: { ':k': PURGE, ':upto': `${new Date(cutoff).toISOString()}${SEP}\uffff` },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    items.push(...((out.Items ?? []) as KeyRecord[]).map(withoutListing));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * Once, after this index is deployed: gives every record written before it its index attributes (a paged Scan, the
 * one read of the whole table; each write conditional on the version read, so a concurrent admin change wins).
 * Returns how many records it updated.
 */
export async function reindexKeys({ doc, tables }: Storage): Promise<number> {
  let updated = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(new ScanCommand({ TableName: tables.keys, ...(start ? { ExclusiveStartKey: start } : {}) })),
    );
    for (const item of (out.Items ?? []) as Array<KeyRecord & { listKey?: string; listSort?: string }>) {
      const want = listing(item);
      if (item.listKey === want.listKey && item.listSort === want.listSort) continue;
      try {
        await guarded(() =>
          doc.send(
            new UpdateCommand({
              TableName: tables.keys,
              Key: { hash: item.hash },
              UpdateExpression: 'SET listKey = :k, listSort = :s',
              ConditionExpression: item.version ? '#v = :v' : 'attribute_not_exists(#v)',
              ExpressionAttributeNames: { '#v': 'version' },
              ExpressionAttributeValues: {
                ':k': want.listKey,
                ':s': want.listSort,
                ...(item.version ? { ':v': item.version } : {}),
              },
            }),
          ),
        );
        updated++;
      } catch (err) {
        // Changed meanwhile: that write carried the attributes already.
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return updated;
}
