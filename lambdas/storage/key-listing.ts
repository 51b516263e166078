/**
 * Listing keys at a million: the admin tool's `keys list` and `keys purge` read the keys table through one index,
 * `byListing` (contract/tables.ts), never a Scan. Every record carries two attributes the key store writes with it:
 * - `listKey` = `<plan>#<status>`, or `purge#<plan>#<status>` while the record has something for purge to delete in
 *   API Gateway (revoked with an API key or usage plan left, or a usage plan it moved off), or else
 *   `pending#<plan>#<status>` while a change of it is not fully applied (its reconcile is pending) or it still names an
 *   API key of its own from before pools, or its create has not yet shown a secret that works (`undelivered`: the
 *   same create run again finds it there, reading only the owner's pending keys): `keys reconcile --all` reads the
 *   purge and pending partitions, so a sweep when nothing is pending reads nothing of the table's other keys;
 * - `listSort` = `<owner, lower case>\u0001<createdAt>\u0001<keyId>`.
 * So a plan, a status, or both name two to sixteen partitions, an owner is a key condition on each, and a page is a
 * Query with a `Limit` on each in turn: every item read is one returned, however many keys wait for purge (a mass
 * revocation puts thousands there; they are listed like the others, never read to be filtered out). Purge reads the
 * `purge#…` partitions: exactly the keys it has work for.
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
import { NOT_A_POSITION, cursorFilter, readCursor, writeCursor, type ListCursor } from './list-cursor.ts';

const BY_LISTING = KEYS_TABLE.indexes[1].indexName;
const SEP = '\u0001';
const PURGE = 'purge#';
const PENDING = 'pending#';
/** Where records waiting for purge were kept before they stayed beside their plan and status: purge still reads it. */
const OLD_PURGE = 'purge';
const STATUSES: readonly KeyStatus[] = ['active', 'revoked'];

/** How `--owner` matches: case-insensitively, Unicode-normalized. */
export const ownerKey = (owner: string) => owner.trim().normalize('NFKC').toLowerCase();

/** Whether a record has something in API Gateway for purge to delete (purge checks when, lib/admin/purge.ts). */
function awaitsPurge(
  r: Pick<KeyRecord, 'status' | 'apiGatewayKeyId' | 'usagePlanId' | 'retiredUsagePlanId' | 'retiredApiKeyId'>,
) {
  return (
    !!r.retiredUsagePlanId || !!r.retiredApiKeyId || (r.status === 'revoked' && !!(r.apiGatewayKeyId || r.usagePlanId))
  );
}

/**
 * Whether a record waits for a reconcile (lib/admin/reconcile.ts): its last write not reconciled, or, written before
 * versioned writes (so nothing says it is pending), an active key still on an API key of its own; or for its create to
 * be run again (no secret of it shown works yet).
 */
function awaitsReconcile(
  r: Pick<KeyRecord, 'status' | 'version' | 'reconciledVersion' | 'apiGatewayKeyId' | 'usagePlanId' | 'undelivered'>,
) {
  return (
    (r.reconciledVersion ?? 0) !== (r.version ?? 0) ||
    (r.status === 'active' && !!(r.apiGatewayKeyId || r.usagePlanId)) ||
    !!r.undelivered
  );
}

/** The index attributes of a record, written with it (with the version the write gives it). */
export function listing(r: KeyRecord): { listKey: string; listSort: string } {
  const part = `${r.plan}#${r.status}`;
  return {
    listKey: awaitsPurge(r) ? `${PURGE}${part}` : awaitsReconcile(r) ? `${PENDING}${part}` : part,
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
  /** Only the keys waiting for a reconcile (the pending partitions; what waits for purge is `listPurgeDue`'s). */
  readonly pending?: boolean;
}

export interface ListPage {
  readonly records: KeyRecord[];
  /** Where the next page starts (`after` of the next call); absent: no more. */
  readonly next?: string;
  /** Items DynamoDB read for this page (ScannedCount), for the bench and the tests. */
  readonly read: number;
}

/** The `<plan>#<status>` pairs of a filter (`purge#` in front for the keys waiting for purge). */
function pairs(f: Pick<ListFilter, 'plan' | 'status'>): string[] {
  const plans = f.plan ? [f.plan] : (Object.keys(PLANS) as PlanName[]);
  const statuses = f.status ? [f.status] : STATUSES;
  return plans.flatMap((p) => statuses.map((s) => `${p}#${s}`));
}

/**
 * The filter's partitions, in listing order: for each plan and status, its keys waiting for purge, those waiting for
 * a reconcile, then the rest; with `pending`, only those waiting for a reconcile.
 */
const partitions = (f: ListFilter) =>
  pairs(f).flatMap((pair) => (f.pending ? [`${PENDING}${pair}`] : [`${PURGE}${pair}`, `${PENDING}${pair}`, pair]));

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

/** Whether a record waiting for purge is due at `cutoff` (ms): revoked by then, or a usage plan it moved off. */
const dueBy = (r: KeyRecord, cutoff: number) =>
  !!r.retiredUsagePlanId || Date.parse(r.revokedAt ?? r.createdAt) <= cutoff;

/**
 * Records waiting for `keys purge` whose time has come at `cutoff` (ms): read from the purge partitions, nothing
 * else (what is read is the purge backlog itself; purge checks each record again). Records put in the one `purge`
 * partition of before are read too, until `keys reindex` or their purge moves them.
 */
export async function listPurgeDue({ doc, tables }: Storage, cutoff: number): Promise<KeyRecord[]> {
  const items: KeyRecord[] = [];
  const queries = [
    ...pairs({}).map((pair) => ({ ':k': `${PURGE}${pair}` })),
    // The old partition was sorted by due time.
    { ':k': OLD_PURGE, ':upto': `${new Date(cutoff).toISOString()}${SEP}\uffff` },
  ];
  for (const values of queries) {
    let start: Record<string, unknown> | undefined;
    do {
      const out = await guarded(() =>
        doc.send(
          new QueryCommand({
            TableName: tables.keys,
            IndexName: BY_LISTING,
            KeyConditionExpression: ':upto' in values ? 'listKey = :k AND listSort < :upto' : 'listKey = :k',
            ExpressionAttributeValues: values,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      items.push(...((out.Items ?? []) as KeyRecord[]).map(withoutListing).filter((r) => dueBy(r, cutoff)));
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return items;
}

/**
 * Once after this index is deployed, and after a release that changes what its attributes hold (keys waiting for
 * purge once shared one `purge` partition): gives every record the index attributes it is written with today (a
 * paged Scan, the one read of the whole table; each write conditional on the version read, so a concurrent admin
 * change wins). Returns how many records it updated.
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
