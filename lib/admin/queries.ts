/** The commands that only read: list, show, usage. */
import { limitsOf } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { view, type KeyView } from './rules.ts';
import { minuteCounts } from './usage-chart.ts';
import { isoOf, readKeyStanding } from './standing.ts';

/** A `--after` the listing cannot continue from (another filter's, edited, cut short): bad input, exit 1 like all. */
export class CursorRefused extends AdminError {}

/** How many keys `keys list` prints at most unless told (`--limit`); `--after` continues. */
export const LIST_PAGE = 100;

/**
 * One page of keys by plan, owner (case-insensitive, exact) and status, served by the keys table's listing index
 * (lambdas/storage/key-listing.ts): what it reads is what it returns.
 */
export async function list(
  ctx: AdminContext,
  filter: ListFilter = {},
  page: { limit?: number; after?: string } = {},
): Promise<{ keys: KeyView[]; next?: string }> {
  const limit = page.limit ?? LIST_PAGE;
  const out = await ctx.deps.store.listPage(filter, limit, page.after).catch((err: unknown) => {
    if (err instanceof RangeError) throw new CursorRefused(`--after: ${err.message}`);
    throw err;
  });
  const keys = out.records.map(view);
  return { keys, ...(out.next ? { next: out.next } : {}) };
}

/**
 * A key as admins see it, with its standing (what support is asked about first): a ban (the limiter's, the gateway's
 * or an admin's, whichever ends last) and a spent day, with their ends.
 */
export async function show(
  ctx: AdminContext,
  keyId: string,
): Promise<KeyView & { bannedUntil: string | null; daySpentUntil: string | null }> {
  const record = await ctx.find(keyId);
  const s = await readKeyStanding(ctx, record);
  return {
    ...view(record),
    bannedUntil: s.banEnd ? isoOf(s.banEnd) : null,
    daySpentUntil: s.spent ? isoOf(s.w.dayReset) : null,
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
