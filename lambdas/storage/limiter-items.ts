/**
 * The keys of the limiter's items in the state table, shared by the limiter's counters (limit-store.ts) and the
 * authorizer's ban check (ban-reader.ts), which must read the very item a ban is written to.
 */

/** A key shard's counters for one UTC day (shard 0 has no suffix: the key of the unsharded item). */
export const shardKey = (subject: string, dayStart: number, shard: number) => ({
  pk: `rl#${subject}#${dayStart}${shard ? `#${shard}` : ''}`,
});

/** The 429s of one minute window, towards the ban. */
export const rejectionKey = (subject: string, minuteStart: number) => ({ pk: `rlr#${subject}#${minuteStart}` });
