/** The commands that only read: list, show, usage. */
import { limitsOf, type KeyRecord, type KeyScope } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { view, type KeyView } from './rules.ts';
import { minuteCounts } from './usage-chart.ts';
import { isoOf, readKeyStanding } from './standing.ts';
import { lastUse, lastUses, type LastUse } from './last-use.ts';

/** A `--after` the listing cannot continue from (another filter's, edited, cut short): bad input, exit 1 like all. */
export class CursorRefused extends AdminError {}

/** How many keys `keys list` prints at most unless told (`--limit`); `--after` continues. */
export const LIST_PAGE = 100;

/**
 * How many records one `keys list --expiring` page reads at most looking for expiring keys (nothing indexes expiry:
 * the listing is read and filtered); when it stops there, its `next` continues the search.
 */
export const EXPIRING_READ_BUDGET = 10_000;

/** What `keys list` and `keys show` add to a key's view: its terms as of now, never a secret's hash. */
export interface KeyTerms {
  /** What it may call: `read`, only the operations that read; `all`, every one. */
  readonly scope: KeyScope;
  /** When it expires (ISO), or null when it never does. */
  readonly expiresAt: string | null;
  /** Refused as expired from `expiresAt` on. */
  readonly expired: boolean;
  /** The earlier secrets still accepted (rotations with an overlap that runs): when each stops being accepted. */
  readonly overlaps: ReadonlyArray<{ readonly until: string }>;
}

/** A key as `keys list` returns it: `lastUsedAt`/`lastUseSince` when the listing read its last use. */
export type ListedKey = Omit<KeyView, 'overlaps'> &
  KeyTerms & { readonly lastUsedAt?: string | null; readonly lastUseSince?: string };

/** A key as `keys show` returns it: its standing and its last use (both null when the target keeps no counters). */
export type ShownKey = Omit<KeyView, 'overlaps'> &
  KeyTerms & {
    readonly bannedUntil: string | null;
    readonly daySpentUntil: string | null;
    /** The UTC minute (ISO) of its latest admitted request; null: none since `lastUseSince` (or not known). */
    readonly lastUsedAt: string | null;
    /** The start of the span last use was read over (ISO); null when the target keeps no limiter counters. */
    readonly lastUseSince: string | null;
  };

/** The record as admins see it, with its terms as of `nowSec`. */
export function termsView(record: KeyRecord, nowSec: number): Omit<KeyView, 'overlaps'> & KeyTerms {
  const { overlaps: _hashes, ...v } = view(record);
  const until = record.validUntil;
  return {
    ...v,
    scope: record.scope ?? 'all',
    expiresAt: until !== undefined ? isoOf(until) : null,
    expired: until !== undefined && until <= nowSec,
    // Only those still running: an ended overlap is refused whatever its leftover item says.
    overlaps: (record.overlaps ?? []).filter((o) => o.until > nowSec).map((o) => ({ until: isoOf(o.until) })),
  };
}

const lastUseView = (u: LastUse) => ({
  lastUsedAt: u.minute !== undefined ? isoOf(u.minute) : null,
  lastUseSince: isoOf(u.since),
});

/** Whether a key expires by `nowSec + within` (one already expired does: it is refused now). */
const expiresWithin = (record: KeyRecord, nowSec: number, within: number) =>
  record.validUntil !== undefined && record.validUntil <= nowSec + within;

export interface ListPageOptions {
  readonly limit?: number;
  /** The `next` of the page before. */
  readonly after?: string;
  /** Seconds: only keys that expire within this much from now, or have expired (`--expiring`). */
  readonly expiringWithin?: number;
  /** Read each key's last use (1 read unit per key of the page). @default true */
  readonly lastUse?: boolean;
}

/**
 * One page of keys by plan, owner (case-insensitive, exact) and status, served by the keys table's listing index
 * (lambdas/storage/key-listing.ts): what it reads is what it returns. With `expiringWithin`, the listing is read on
 * until the page is full, the listing ends or EXPIRING_READ_BUDGET records were read (`read` says how many), each
 * read asking for no more than the page still has room for, so `next` never skips a match. Each key's last use is
 * read with it (last-use.ts), unless `lastUse` is false.
 */
export async function list(
  ctx: AdminContext,
  filter: ListFilter = {},
  page: ListPageOptions = {},
): Promise<{ keys: ListedKey[]; next?: string; read?: number }> {
  const limit = page.limit ?? LIST_PAGE;
  const nowSec = Math.floor(ctx.now() / 1000);
  const read = (n: number, after: string | undefined) =>
    ctx.deps.store.listPage(filter, n, after).catch((err: unknown) => {
      if (err instanceof RangeError) throw new CursorRefused(`--after: ${err.message}`);
      throw err;
    });
  const records: KeyRecord[] = [];
  let next = page.after;
  let scanned = 0;
  const within = page.expiringWithin;
  do {
    const out = await read(limit - records.length, next);
    scanned += out.records.length;
    records.push(...(within === undefined ? out.records : out.records.filter((r) => expiresWithin(r, nowSec, within))));
    next = out.next;
  } while (within !== undefined && next && records.length < limit && scanned < EXPIRING_READ_BUDGET);
  const used = page.lastUse === false ? undefined : await lastUses(ctx, records);
  const keys = records.map((r) => {
    const u = used?.get(r.keyId);
    return { ...termsView(r, nowSec), ...(u ? lastUseView(u) : {}) };
  });
  return { keys, ...(next ? { next } : {}), ...(within !== undefined ? { read: scanned } : {}) };
}

/**
 * A key as admins see it, with its standing (what support is asked about first): a ban (the limiter's, the gateway's
 * or an admin's, whichever ends last) and a spent day, with their ends; its terms (scope, expiry, overlaps that run)
 * and when it was last used.
 */
export async function show(ctx: AdminContext, keyId: string): Promise<ShownKey> {
  const record = await ctx.find(keyId);
  const [s, used] = await Promise.all([readKeyStanding(ctx, record), lastUse(ctx, record)]);
  return {
    ...termsView(record, Math.floor(ctx.now() / 1000)),
    bannedUntil: s.banEnd ? isoOf(s.banEnd) : null,
    daySpentUntil: s.spent ? isoOf(s.w.dayReset) : null,
    ...(used ? lastUseView(used) : { lastUsedAt: null, lastUseSince: null }),
  };
}

/** Today's counts of a key from the rate limiter, and its minute-by-minute history when the target keeps one. */
export async function usage(ctx: AdminContext, keyId: string) {
  const { deps } = ctx;
  const record = await ctx.find(keyId);
  const w = windowsAt(ctx.now());
  const limits = limitsOf(record);
  // A key without limits has never been counted on more than one shard.
  const counted = limits ?? { perMinute: 1, perDay: 1 };
  const u = await deps.limits.usage(record.keyId, counted, w);
  return {
    keyId: record.keyId,
    plan: record.plan,
    status: record.status,
    ...(record.revokedAt ? { revokedAt: record.revokedAt } : {}),
    limits,
    minute: { count: u.minuteCount, resetsAt: new Date(w.minuteReset * 1000).toISOString() },
    day: { count: u.dayCount, resetsAt: new Date(w.dayReset * 1000).toISOString() },
    bannedUntil: u.banUntil ? new Date(u.banUntil * 1000).toISOString() : null,
    ...(deps.history
      ? {
          history: {
            dayStart: w.dayStart,
            nowMinute: w.minuteStart,
            ...minuteCounts(await deps.history(record.keyId, counted, w), u.dayCount),
          },
        }
      : {}),
  };
}
