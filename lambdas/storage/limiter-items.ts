/**
 * The keys of the limiter's items in the state table, shared by the limiter's counters (limit-store.ts), its usage
 * history (usage-history.ts) and the authorizer's ban check (ban-reader.ts), which must read the very item a ban is
 * written to.
 */

/** How long the limiter's items are kept (TTL, housekeeping only: every item is keyed by its window). */
export const KEEP_SECONDS = 2 * 86_400;

/** A key shard's counters for one UTC day (shard 0 has no suffix: the key of the unsharded item). */
export const shardKey = (subject: string, dayStart: number, shard: number) => ({
  pk: `rl#${subject}#${dayStart}${shard ? `#${shard}` : ''}`,
});

/** The 429s of one minute window, towards the ban. */
export const rejectionKey = (subject: string, minuteStart: number) => ({ pk: `rlr#${subject}#${minuteStart}` });

/** A key shard's usage history for one hour (the admin tool's minute-by-minute chart). */
export const hourKey = (subject: string, hourStart: number, shard: number) => ({
  pk: `rlh#${subject}#${hourStart}${shard ? `#${shard}` : ''}`,
});
