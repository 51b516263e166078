/**
 * `keys unban <id>`: lifts what refuses a key before it ends: a ban (the limiter's, 15 minutes after the 429s that
 * caused it, or an admin's) and a spent day (today's quota starts again), in one transaction: the record says so
 * (bans ending by `unbannedThrough` are lifted), and the limiter's counters and the gateway's standing lose them. The
 * authorizer lets the key through once its cached answer expires and warm functions ask storage again (both within
 * the authorizer cache TTL). A key neither banned nor spent is left alone.
 */
import type { AdminContext } from './context.ts';
import { entryOf } from './audit.ts';
import { changeBy, recordStep } from './lifecycle.ts';
import { view, type KeyView } from './rules.ts';
import { isoOf, readKeyStanding } from './standing.ts';

export type Unbanned = KeyView & {
  /** The end of the ban it lifted (ISO), if any. */
  readonly wasBannedUntil: string | null;
  /** Whether it started today's spent quota again. */
  readonly liftedDay: boolean;
};

export async function unban(ctx: AdminContext, keyId: string): Promise<Unbanned> {
  const first = await recordStep(() => ctx.find(keyId));
  const { banEnd, spent, w } = await recordStep(() => readKeyStanding(ctx, first));
  if (!banEnd && !spent) return { ...view(first), wasBannedUntil: null, liftedDay: false };
  const lifted = [banEnd ? `its ban (until ${isoOf(banEnd)})` : '', spent ? "today's spent quota" : ''].filter(Boolean);
  const change = await changeBy(ctx, 'unban', () => `lifted ${lifted.join(' and ')}`, {
    ...(banEnd ? { bannedUntil: isoOf(banEnd) } : {}),
    ...(spent ? { daySpentUntil: isoOf(w.dayReset) } : {}),
  });
  const record = await recordStep(() =>
    ctx.onLatest(keyId, async (record) =>
      ctx.deps.store.update(
        record,
        banEnd ? { unbannedThrough: Math.max(banEnd, record.unbannedThrough ?? 0) } : {},
        banEnd ? ['bannedUntil'] : [],
        {
          audit: entryOf(change, record),
          standing: {
            change: { ...(banEnd ? { liftBansThrough: banEnd } : {}), ...(spent ? { liftDay: true } : {}) },
            at: ctx.now(),
          },
        },
      ),
    ),
  );
  return { ...view(record), wasBannedUntil: banEnd ? isoOf(banEnd) : null, liftedDay: spent };
}
