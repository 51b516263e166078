/**
 * The keys of the limiter's items in the state table, shared by the limiter's counters (limit-store.ts) and its
 * usage history (usage-history.ts). (What the authorizer reads, a key's standing, is keyed by the key's hash:
 * standing.ts.)
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
