/**
 * Listing keys at a million: `keys list` reads one index, `byListing` (contract/tables.ts), never a Scan. The key
 * store writes two attributes with every record:
 * - `listKey` = `<plan>#<status>`, or `pending#<plan>#<status>` while its create has shown no working secret;
 * - `listSort` = `<owner, lower case>\u0001<createdAt>\u0001<keyId>`.
 * A filter names 2 to 16 partitions, an owner is a key condition on each, and every item read is one returned. One
 * index, as CloudFormation adds at most one GSI per table per update. Owners match exactly after NFKC and lower
 * case; `\u0001` cannot occur in an owner, so `acme` never matches `acme#2`. A record written otherwise is listed
 * again once `keys reindex` or its next write sets these.
 */
import { QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PLANS, type PlanName } from '../../contract/plans.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';
import type { KeyRecord, KeyStatus } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';
import { NOT_A_POSITION, cursorFilter, readCursor, writeCursor, type ListCursor } from './list-cursor.ts';

const BY_LISTING = KEYS_TABLE.indexes[1].indexName;
const SEP = '\u0001';
const PENDING = 'pending#';
const STATUSES: readonly KeyStatus[] = ['active', 'revoked'];

/** How `--owner` matches: case-insensitively, Unicode-normalized. */
export const ownerKey = (owner: string) => owner.trim().normalize('NFKC').toLowerCase();

/** The index attributes of a record, written with it. */
export function listing(r: KeyRecord): { listKey: string; listSort: string } {
  const part = `${r.plan}#${r.status}`;
  return {
    listKey: r.undelivered ? `${PENDING}${part}` : part,
    listSort: `${ownerKey(r.owner)}${SEP}${r.createdAt}${SEP}${r.keyId}`,
  };
}

/** A record as the domain knows it: without the index attributes. */
export const withoutListing = ({ listKey: _k, listSort: _s, ...r }: KeyRecord & Partial<ReturnType<typeof listing>>) =>
  r as KeyRecord;

export interface ListFilter {
  readonly plan?: PlanName;
  readonly owner?: string;
  readonly status?: KeyStatus;
  /** Only the keys whose create has not shown a working secret yet (the pending partitions). */
  readonly pending?: boolean;
}

export interface ListPage {
  readonly records: KeyRecord[];
  /** Where the next page starts (`after` of the next call); absent: no more. */
  readonly next?: string;
  /** Items DynamoDB read for this page (ScannedCount), for the bench and the tests. */
  readonly read: number;
}

/** The `<plan>#<status>` pairs of a filter. */
function pairs(f: Pick<ListFilter, 'plan' | 'status'>): string[] {
  const plans = f.plan ? [f.plan] : (Object.keys(PLANS) as PlanName[]);
  const statuses = f.status ? [f.status] : STATUSES;
  return plans.flatMap((p) => statuses.map((s) => `${p}#${s}`));
}

/** The filter's partitions, in listing order: for each plan and status, its pending keys, then the rest. */
const partitions = (f: ListFilter) =>
  pairs(f).flatMap((pair) => (f.pending ? [`${PENDING}${pair}`] : [`${PENDING}${pair}`, pair]));

/**
 * The key condition of one partition: the owner's range when there is one, starting after `after` (the listSort
 * the page before ended on; `\u0000` is the least character, so `after\u0000` is the first sort key past it).
 */
function keyCondition(part: string, owner: string | undefined, after: string | undefined) {
  const values: Record<string, unknown> = { ':k': part };
  if (owner === undefined && after === undefined) return { condition: 'listKey = :k', values };
  if (owner === undefined)
    return { condition: 'listKey = :k AND listSort > :after', values: { ...values, ':after': after } };
  // An owner's sort keys are `<owner>\u0001…`: all of them sort below `<owner>\u0002`.
  values[':lo'] = after === undefined ? `${owner}${SEP}` : `${after}\u0000`;
  values[':hi'] = `${owner}\u0002`;
  return { condition: 'listKey = :k AND listSort BETWEEN :lo AND :hi', values };
}

/**
 * Up to `limit` records matching the filter, in partition order (owner, then creation time within one). Every
 * query carries the page's remaining `Limit`, so a page reads at most what it returns plus one empty answer per
 * partition it passes. A malformed cursor, or one from a listing with another filter, is a RangeError saying so.
 */
export async function listKeys(
  { doc, tables }: Storage,
  filter: ListFilter,
  limit: number,
  after?: string,
): Promise<ListPage> {
  const parts = partitions(filter);
  const owner = filter.owner === undefined ? undefined : ownerKey(filter.owner);
  const scope = cursorFilter({ ...filter, ...(owner === undefined ? {} : { owner }) });
  const records: KeyRecord[] = [];
  let read = 0;
  let { p, s }: ListCursor = after ? readCursor(after, scope, tables.keys, owner) : { p: 0 };
  if (p >= parts.length) throw new RangeError(NOT_A_POSITION);
  while (p < parts.length && records.length < limit) {
    const { condition, values } = keyCondition(parts[p]!, owner, s);
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tables.keys,
          IndexName: BY_LISTING,
          KeyConditionExpression: condition,
          ExpressionAttributeValues: values,
          Limit: limit - records.length,
        }),
      ),
    ).catch((err: unknown) => {
      // Only a cursor's position can make a valid filter's query invalid: said as the cursor's fault, not DynamoDB's.
      if (after && (err as Error)?.name === 'ValidationException') throw new RangeError(NOT_A_POSITION);
      throw err;
    });
    read += out.ScannedCount ?? 0;
    records.push(...((out.Items ?? []) as KeyRecord[]).map(withoutListing));
    const last = out.LastEvaluatedKey?.listSort as string | undefined;
    if (last === undefined) {
      p++;
      s = undefined;
    } else s = last;
  }
  const more = p < parts.length;
  return {
    records,
    read,
    ...(more ? { next: writeCursor({ p, ...(s === undefined ? {} : { s }) }, scope, tables.keys) } : {}),
  };
}

/**
 * Once after a release that changes what the index attributes hold (release 3357b0c kept revoked keys whose API
 * Gateway key was not yet deleted in one `purge` partition, which nothing reads now): gives every record the
 * attributes it is written with today (a paged Scan, the one read of the whole table; each write conditional on the
 * version read, so a concurrent admin change wins). Returns how many records it updated.
 */
export async function reindexKeys({ doc, tables }: Storage): Promise<number> {
  let updated = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(new ScanCommand({ TableName: tables.keys, ...(start ? { ExclusiveStartKey: start } : {}) })),
    );
    for (const item of (out.Items ?? []) as Array<KeyRecord & { listKey?: string; listSort?: string }>) {
      // A rotated secret's overlap item (key-store.ts replaceHash) is no key: it stays out of the listing.
      if (!item.keyId) continue;
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
