/**
 * The `--after` cursor of `keys list`: where the next page starts (a partition of the filter and the sort key the
 * page ended on), bound to the filter it was printed for and checked on the way back, so a cursor from another
 * listing, cut short by a terminal or edited gets a clear error instead of DynamoDB's ValidationException or a
 * silently empty page. It holds no key hash (the table's key is not needed: the next query starts after a sort key,
 * and sort keys end in the unique key id).
 *
 * The tag is an HMAC under a fixed key: a checksum that an edit cannot keep consistent by accident, not a secret.
 * Nothing needs one: whoever runs `keys list` may list every key, so a forged cursor reaches nothing they could not.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface ListCursor {
  /** Index into the partitions of the filter. */
  readonly p: number;
  /** The sort key the page before ended on, within partition `p`; absent: from its start. */
  readonly s?: string;
}

const TAG_KEY = 'animal-store keys list cursor v1';
const TAG_BYTES = 12;
const FILTER_BYTES = 6;

/** A short digest of a filter (plan, status, normalized owner): what a cursor is bound to. */
export function cursorFilter(filter: { plan?: string; status?: string; owner?: string; pending?: boolean }): string {
  const canonical = JSON.stringify([
    filter.plan ?? null,
    filter.status ?? null,
    filter.owner ?? null,
    ...(filter.pending ? ['pending'] : []),
  ]);
  return createHash('sha256')
    .update(canonical)
    .digest('base64url')
    .slice(0, FILTER_BYTES * 2);
}

const tagOf = (body: string) => createHmac('sha256', TAG_KEY).update(body).digest().subarray(0, TAG_BYTES);

/** The cursor as printed: base64url of `tag | body`, body = JSON of the position and the filter it belongs to. */
export function writeCursor(c: ListCursor, filter: string): string {
  const body = JSON.stringify({ f: filter, p: c.p, ...(c.s === undefined ? {} : { s: c.s }) });
  return Buffer.concat([tagOf(body), Buffer.from(body)]).toString('base64url');
}

/** The position a printed cursor names, for this filter; RangeError saying what is wrong with it otherwise. */
export function readCursor(after: string, filter: string): ListCursor {
  const raw = Buffer.from(after, 'base64url');
  const body = raw.subarray(TAG_BYTES).toString();
  const tag = raw.subarray(0, TAG_BYTES);
  if (raw.length <= TAG_BYTES || !timingSafeEqual(tag, tagOf(body)))
    throw new RangeError('not a cursor of `keys list` (changed or cut short): copy the whole `More:` line again');
  const c = JSON.parse(body) as { f: string; p: number; s?: string };
  if (c.f !== filter)
    throw new RangeError(
      'this cursor belongs to a listing with other filters: repeat the --plan, --owner and --status of the page ' +
        'that printed it, or leave --after out to start over',
    );
  if (!Number.isInteger(c.p) || c.p < 0 || (c.s !== undefined && typeof c.s !== 'string'))
    throw new RangeError('not a cursor of `keys list`');
  return { p: c.p, ...(c.s === undefined ? {} : { s: c.s }) };
}
