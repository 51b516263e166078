/**
 * `keys unban <id>`: lifts what refuses a key before it ends: a ban (the limiter's, 15 minutes after the 429s that
 * caused it, or an admin's) and a spent day (today's quota starts again). The record says so (bans ending by
 * `unbannedThrough` are lifted, `dayLifted` today), and reconcile lifts them on the limiter's counters and the
 * gateway's standing; the authorizer lets the key through once its cached answer expires and warm functions ask
 * storage again (both within the authorizer cache TTL). A key neither banned nor spent is left alone, unless a
 * reconcile is pending: then it is run.
 */
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { limitsOf } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { entryOf } from './audit.ts';
import { changeBy, followUp, recordStep, type Followed } from './lifecycle.ts';
import { AdminError } from './ports.ts';
import { converged } from './reconcile.ts';
import { view, type KeyView } from './rules.ts';

export type Unbanned = KeyView &
  Followed & {
    /** The end of the ban it lifted (ISO), if any. */
    readonly wasBannedUntil: string | null;
    /** Whether it started today's spent quota again. */
    readonly liftedDay: boolean;
    readonly reconciled?: readonly string[];
  };

export async function unban(ctx: AdminContext, keyId: string): Promise<Unbanned> {
  const { deps } = ctx;
  if (!deps.liftBan) throw new AdminError('this target keeps no limiter counters: nothing to unban');
  const first = await recordStep(() => ctx.find(keyId));
  const w = windowsAt(ctx.now());
  const limits = limitsOf(first) ?? { perMinute: 1, perDay: 1 };
  const u = await recordStep(() => deps.limits.usage(first.keyId, limits, w));
  const st = await recordStep(() => deps.store.readStanding(first.hash));
  const ends = [u.banUntil ?? 0, st.bannedUntil ?? 0, first.bannedUntil ?? 0].filter((t) => t > w.nowSec);
  const banEnd = ends.length ? Math.max(...ends) : 0;
  const spent = st.spentDay === w.dayStart || (!!limitsOf(first) && u.dayCount >= limits.perDay);
  if (!banEnd && !spent) {
    if (converged(first)) return { ...view(first), wasBannedUntil: null, liftedDay: false };
    const { record, did, ...followed } = await recordStep(() => followUp(ctx, keyId));
    return { ...view(record), ...followed, wasBannedUntil: null, liftedDay: false, reconciled: did };
  }
  const iso = (sec: number) => new Date(sec * 1000).toISOString();
  const lifted = [banEnd ? `its ban (until ${iso(banEnd)})` : '', spent ? "today's spent quota" : ''].filter(Boolean);
  const change = await changeBy(ctx, 'unban', () => `lifted ${lifted.join(' and ')}`, {
    ...(banEnd ? { bannedUntil: iso(banEnd) } : {}),
    ...(spent ? { daySpentUntil: iso(w.dayReset) } : {}),
  });
  await recordStep(() =>
    ctx.onLatest(keyId, async (record) =>
      deps.store.update(
        record,
        {
          ...(banEnd ? { unbannedThrough: Math.max(banEnd, record.unbannedThrough ?? 0) } : {}),
          ...(spent ? { dayLifted: w.dayStart } : {}),
        },
        banEnd ? ['bannedUntil'] : [],
        entryOf(change, record),
      ),
    ),
  );
  const { record, did: _did, ...followed } = await followUp(ctx, keyId);
  return {
    ...view(record),
    ...followed,
    wasBannedUntil: banEnd ? new Date(banEnd * 1000).toISOString() : null,
    liftedDay: spent,
  };
}
