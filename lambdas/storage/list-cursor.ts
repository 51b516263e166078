/**
 * The `--after` cursor of `keys list`: where the next page starts (a partition of the filter and the sort key the
 * page ended on). It holds no key hash: sort keys end in the unique key id.
 * The tag is an HMAC over the body (with a digest of the filter) under a key named by the keys table. So a cursor
 * of another filter, stage or table, cut short or edited, gets a clear error, not a ValidationException or an empty
 * page. This guards against mistakes, not attackers: whoever runs `keys list` can read the table anyway.
 * What a cursor says is checked too: its partition must be the listing's, its sort key must have the listing's
 * shape (`<owner>\u0001<created>\u0001<key id>`) and, with `--owner`, that owner. A position DynamoDB still refuses
 * is reported as the cursor's fault (key-listing.ts).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface ListCursor {
  /** Index into the partitions of the filter. */
  readonly p: number;
  /** The sort key the page before ended on, within partition `p`; absent: from its start. */
  readonly s?: string;
}

const TAG_KEY = 'animal-store keys list cursor v1';

/** A cursor whose tag holds but whose position is none of this listing's (made up, or re-tagged). */
export const NOT_A_POSITION = 'not a cursor of `keys list` (its position is not one of this listing)';
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

const tagOf = (body: string, table: string) =>
  createHmac('sha256', `${TAG_KEY}\u0000${table}`).update(body).digest().subarray(0, TAG_BYTES);

/** Whether `s` is a listing sort key (key-listing.ts `listing`): owner, creation time and key id, `\u0001` between. */
function isSortKey(s: string): boolean {
  const [owner, created, keyId, ...more] = s.split('\u0001');
  return (
    !more.length &&
    !!owner &&
    owner.length <= 512 &&
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/.test(created ?? '') &&
    /^[A-Za-z0-9_-]{1,64}$/.test(keyId ?? '')
  );
}

/**
 * What a printed cursor starts with: base64url may start with `-`, which a command line reads as an option (`--after
 * -94W…` was refused as "--after needs a value" for about one cursor in 64).
 */
const CURSOR_PREFIX = 'c';

/**
 * The cursor as printed: `c` and base64url of `tag | body`, body = JSON of the position and the filter it belongs
 * to; `table`: the keys table listed (the tag is bound to it).
 */
export function writeCursor(c: ListCursor, filter: string, table: string): string {
  const body = JSON.stringify({ f: filter, p: c.p, ...(c.s === undefined ? {} : { s: c.s }) });
  return CURSOR_PREFIX + Buffer.concat([tagOf(body, table), Buffer.from(body)]).toString('base64url');
}

/**
 * The position a printed cursor names, for this filter (`owner`: its normalized owner, which the sort key must
 * start with) on this table; RangeError saying what is wrong with it otherwise.
 */
export function readCursor(after: string, filter: string, table: string, owner?: string): ListCursor {
  const raw = Buffer.from(after.startsWith(CURSOR_PREFIX) ? after.slice(CURSOR_PREFIX.length) : '', 'base64url');
  const body = raw.subarray(TAG_BYTES).toString();
  const tag = raw.subarray(0, TAG_BYTES);
  if (raw.length <= TAG_BYTES || !timingSafeEqual(tag, tagOf(body, table)))
    throw new RangeError(
      'not a cursor of `keys list` on this stage (changed, cut short, or printed on another stage or table)',
    );
  let c: { f: string; p: number; s?: string };
  try {
    c = JSON.parse(body) as typeof c;
  } catch {
    throw new RangeError(NOT_A_POSITION);
  }
  if (typeof c !== 'object' || c === null) throw new RangeError(NOT_A_POSITION);
  if (c.f !== filter)
    throw new RangeError(
      'this cursor belongs to a listing with other filters (give the --plan, --owner and --status of the page that ' +
        'printed it)',
    );
  if (!Number.isInteger(c.p) || c.p < 0 || (c.s !== undefined && typeof c.s !== 'string'))
    throw new RangeError(NOT_A_POSITION);
  if (c.s !== undefined && (!isSortKey(c.s) || (owner !== undefined && !c.s.startsWith(`${owner}\u0001`))))
    throw new RangeError(NOT_A_POSITION);
  return { p: c.p, ...(c.s === undefined ? {} : { s: c.s }) };
}
