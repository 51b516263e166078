/**
 * Minute-by-minute history of a key's use, for the admin tool's `keys usage` chart. The limiter's items keep only
 * the current minute, so when a counting write opens a minute on a shard, this records the shard's day count that
 * write leaves (sent beside it: limit-store.ts); the admin derives each minute's count as the difference to the next
 * recorded minute.
 *
 * Kept out of the limiter's counter items on purpose: one write per key shard per active minute (not per request)
 * to a small item per shard and hour (`rlh#<subject>#<hourStart>[#<shard>]`, at most 60 numbers, so each write
 * stays one write unit). Best effort: a failed write is logged and the request goes on (that minute's count is then
 * shown under the minute before it). SET of the same value, so an SDK resend writes nothing twice. Day counts of
 * leased keys include each lease when it was taken, so their history is as fine as their leases.
 */
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_LIMITER_SHARDS, type PlanLimits } from '../../contract/plans.ts';
import type { Windows } from '../domain/rate-limit.ts';
import { guarded, type Storage } from './client.ts';

/** Where a lost history write is told: the runtime's logger fits it. */
export interface WarningLog {
  warn(message: string, extra?: Record<string, unknown>): void;
}
import { KEEP_SECONDS, hourKey, shardKey } from './limiter-items.ts';

/** The day count when each minute (unix seconds) opened, in time order. */
export type MinuteOpens = ReadonlyArray<{ readonly minuteStart: number; readonly dayCount: number }>;

export async function recordMinuteOpen(
  { doc, tables }: Storage,
  log: WarningLog,
  subject: string,
  shard: number,
  w: Windows,
  dayCount: number,
): Promise<void> {
  const hourStart = w.minuteStart - (w.minuteStart % 3600);
  try {
    await guarded((options) =>
      doc.send(
        new UpdateCommand({
          TableName: tables.state,
          Key: hourKey(subject, hourStart, shard),
          UpdateExpression: 'SET #m = :d, expiresAt = if_not_exists(expiresAt, :exp)',
          ExpressionAttributeNames: { '#m': `m${(w.minuteStart - hourStart) / 60}` },
          ExpressionAttributeValues: { ':d': dayCount, ':exp': w.dayStart + KEEP_SECONDS },
        }),
        options,
      ),
    );
  } catch (err) {
    log.warn('usage history write failed', { errorName: (err as Error)?.name });
  }
}

/**
 * Today's recorded minute openings for a subject, up to now, every shard merged: at each recorded minute, the sum of
 * each shard's latest day count (the admin tool's read; BatchGetItem, 100 keys at a time). Every shard a key can
 * have is read, whatever its limits are now: a limit change today may have moved its counts between shards.
 */
export async function readUsageHistory(
  { doc, tables }: Storage,
  subject: string,
  _limits: PlanLimits,
  w: Windows,
): Promise<MinuteOpens> {
  const table = tables.state;
  const pending: Array<Record<string, unknown>> = [];
  const shards = MAX_LIMITER_SHARDS;
  for (let h = w.dayStart; h <= w.minuteStart; h += 3600)
    for (let s = 0; s < shards; s++) pending.push(hourKey(subject, h, s));
  const items: Array<Record<string, unknown>> = [];
  for (let attempt = 0; pending.length && attempt < 20; attempt++) {
    const keys = pending.splice(0, 100);
    const out = await guarded((options) =>
      doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }), options),
    );
    items.push(...(out.Responses?.[table] ?? []));
    pending.push(...((out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? []));
  }
  const opens: Array<{ minuteStart: number; shard: number; dayCount: number }> = [];
  for (const item of items) {
    const [, , hour, shard] = String(item.pk).split('#');
    for (const [name, value] of Object.entries(item)) {
      const m = /^m(\d+)$/.exec(name);
      if (m && typeof value === 'number')
        opens.push({ minuteStart: Number(hour) + Number(m[1]) * 60, shard: Number(shard ?? 0), dayCount: value });
    }
  }
  opens.sort((a, b) => a.minuteStart - b.minuteStart);
  const latest = new Map<number, number>();
  const merged: Array<{ minuteStart: number; dayCount: number }> = [];
  for (const o of opens) {
    latest.set(o.shard, o.dayCount);
    const total = [...latest.values()].reduce((a, b) => a + b, 0);
    if (merged.at(-1)?.minuteStart === o.minuteStart) merged.at(-1)!.dayCount = total;
    else merged.push({ minuteStart: o.minuteStart, dayCount: total });
  }
  return merged;
}

/** A subject whose last admitted minute is asked for, and how many of its shards' day items to read. */
export interface LastUseQuery {
  readonly subject: string;
  readonly shards: number;
}

/**
 * The latest minute (its start, unix seconds) each subject was admitted in over `days` (UTC day starts), from the
 * limiter's day items (limiter-items.ts shardKey): their `ms`, the newest minute window a counting write opened, is
 * written only by a take that was granted (limit-store.ts), so it is the minute of an admitted request. Nothing is
 * written for this. Eventually consistent (the answer is to the minute): half a read unit per item asked for, found
 * or not; BatchGetItem, 100 items a request, the requests at once. A subject with no such minute is absent.
 */
export async function readLastAdmitted(
  { doc, tables }: Storage,
  queries: readonly LastUseQuery[],
  days: readonly number[],
): Promise<Map<string, number>> {
  const table = tables.state;
  const keys = queries.flatMap(({ subject, shards }) =>
    days.flatMap((day) => Array.from({ length: shards }, (_, s) => shardKey(subject, day, s))),
  );
  const chunks: Array<Array<Record<string, unknown>>> = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  const items = (
    await Promise.all(
      chunks.map(async (chunk) => {
        const found: Array<Record<string, unknown>> = [];
        let pending = chunk;
        for (let attempt = 0; pending.length; attempt++) {
          // Unprocessed keys are a throttle: a few tries spaced out, then an error rather than a wrong "no use".
          if (attempt >= 5) throw new Error('limiter items unreadable (throttled): run the command again');
          if (attempt) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
          const out = await guarded((options) =>
            doc.send(
              new BatchGetCommand({
                RequestItems: {
                  [table]: { Keys: pending, ProjectionExpression: 'pk, ms' },
                },
              }),
              options,
            ),
          );
          found.push(...(out.Responses?.[table] ?? []));
          pending = (out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
        }
        return found;
      }),
    )
  ).flat();
  const latest = new Map<string, number>();
  for (const item of items) {
    if (typeof item.ms !== 'number') continue;
    // `rl#<subject>#<dayStart>[#<shard>]`: key ids hold no `#`.
    const subject = String(item.pk).split('#')[1]!;
    latest.set(subject, Math.max(latest.get(subject) ?? 0, item.ms));
  }
  return latest;
}
