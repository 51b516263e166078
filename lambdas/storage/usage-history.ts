/**
 * Minute-by-minute history of a key's use, for the admin tool's `keys usage` chart. The limiter's own item keeps
 * only the current minute, so when a request opens a minute (its count is 1) this records the day count at that
 * moment; the admin derives each minute's count as the difference to the next recorded minute.
 *
 * Kept out of the limiter's hot item on purpose: one write per key per active minute (not per request) to a small
 * item per key per hour (`rlh#<subject>#<hourStart>`, at most 60 numbers, so each write stays one write unit), and
 * never on the common path. Best effort: a failed write is logged and the request goes on (that minute's count is
 * then shown under the minute before it). SET of the same value, so an SDK resend writes nothing twice.
 */
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LimitStore, Windows } from '../domain/rate-limit.ts';
import type { Logger } from '../shared/observability.ts';
import { guarded, type Storage } from './client.ts';

const KEEP_SECONDS = 2 * 86_400;
const hourKey = (subject: string, hourStart: number) => ({ pk: `rlh#${subject}#${hourStart}` });

/** The day count when each minute (unix seconds) opened, in time order. */
export type MinuteOpens = ReadonlyArray<{ readonly minuteStart: number; readonly dayCount: number }>;

async function recordOpen({ doc, tables }: Storage, subject: string, w: Windows, dayCount: number): Promise<void> {
  const hourStart = w.minuteStart - (w.minuteStart % 3600);
  await guarded((options) =>
    doc.send(
      new UpdateCommand({
        TableName: tables.state,
        Key: hourKey(subject, hourStart),
        UpdateExpression: 'SET #m = :d, expiresAt = if_not_exists(expiresAt, :exp)',
        ExpressionAttributeNames: { '#m': `m${(w.minuteStart - hourStart) / 60}` },
        ExpressionAttributeValues: { ':d': dayCount, ':exp': w.dayStart + KEEP_SECONDS },
      }),
      options,
    ),
  );
}

/** The limiter, also recording the history when a request opens a minute. */
export function withUsageHistory(store: LimitStore, storage: Storage, log: Logger): LimitStore {
  return {
    async consume(subject, limits, w) {
      const c = await store.consume(subject, limits, w);
      if (c.allowed && c.minuteCount === 1) {
        await recordOpen(storage, subject, w, c.dayCount).catch((err: unknown) =>
          log.warn('usage history write failed', { errorName: (err as Error)?.name }),
        );
      }
      return c;
    },
    usage: (subject, w) => store.usage(subject, w),
  };
}

/** Today's recorded minute openings for a subject, up to now (the admin tool's read; one BatchGetItem). */
export async function readUsageHistory({ doc, tables }: Storage, subject: string, w: Windows): Promise<MinuteOpens> {
  const hours: number[] = [];
  for (let h = w.dayStart; h <= w.minuteStart; h += 3600) hours.push(h);
  const table = tables.state;
  let keys: Array<Record<string, unknown>> = hours.map((h) => hourKey(subject, h));
  const items: Array<Record<string, unknown>> = [];
  for (let attempt = 0; keys.length && attempt < 5; attempt++) {
    const out = await guarded((options) =>
      doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }), options),
    );
    items.push(...(out.Responses?.[table] ?? []));
    keys = (out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
  }
  const opens: Array<{ minuteStart: number; dayCount: number }> = [];
  for (const item of items) {
    const hourStart = Number(String(item.pk).split('#').pop());
    for (const [name, value] of Object.entries(item)) {
      const m = /^m(\d+)$/.exec(name);
      if (m && typeof value === 'number') opens.push({ minuteStart: hourStart + Number(m[1]) * 60, dayCount: value });
    }
  }
  return opens.sort((a, b) => a.minuteStart - b.minuteStart);
}
