/**
 * `keys unban <id>`: lifts what refuses a key before it ends: a ban (the limiter's, 15 minutes after the 429s that
 * caused it, or an admin's), a spent day (today's quota starts again) and probation (a ban that ended less than a day
 * ago still counts the key on a probation shard at the gateway: standing.ts). The record says so (bans ending by
 * `unbannedThrough` are lifted, `dayLifted` today), and reconcile lifts them on the limiter's counters and the
 * gateway's standing; the authorizer lets the key through once its cached answer expires and warm functions ask
 * storage again (both within the authorizer cache TTL). A key neither banned nor spent is left alone, unless a
 * reconcile is pending: then it is run.
 */
import type { AdminContext } from './context.ts';
import { entryOf } from './audit.ts';
import { changeBy, followUp, recordStep, type Followed } from './lifecycle.ts';
import { AdminError } from './ports.ts';
import { converged } from './reconcile.ts';
import { view, type KeyView } from './rules.ts';
import { isoOf, readKeyStanding } from './standing.ts';

export type Unbanned = KeyView &
  Followed & {
    /** The end of the ban it lifted (ISO), if any. */
    readonly wasBannedUntil: string | null;
    /** Whether it started today's spent quota again. */
    readonly liftedDay: boolean;
    /** The end of the probation it lifted (ISO), if any. */
    readonly liftedProbation: string | null;
    readonly reconciled?: readonly string[];
  };

export async function unban(ctx: AdminContext, keyId: string): Promise<Unbanned> {
  const { deps } = ctx;
  if (!deps.liftBan) throw new AdminError('this target keeps no limiter counters: nothing to unban');
  const first = await recordStep(() => ctx.find(keyId));
  const s = await recordStep(() => readKeyStanding(ctx, first));
  const { banEnd, spent, w } = s;
  // A ban running now has its probation after it: lifting the ban (its end) lifts that too.
  const probation = banEnd ? 0 : s.probationOf;
  const none = { wasBannedUntil: null, liftedDay: false, liftedProbation: null };
  if (!banEnd && !spent && !probation) {
    if (converged(first)) return { ...view(first), ...none };
    const { record, did, ...followed } = await recordStep(() => followUp(ctx, keyId));
    return { ...view(record), ...followed, ...none, reconciled: did };
  }
  const lifted = [
    banEnd ? `its ban (until ${isoOf(banEnd)})` : '',
    spent ? "today's spent quota" : '',
    probation ? `its probation (until ${isoOf(s.probationUntil)})` : '',
  ].filter(Boolean);
  const change = await changeBy(ctx, 'unban', () => `lifted ${lifted.join(' and ')}`, {
    ...(banEnd ? { bannedUntil: isoOf(banEnd) } : {}),
    ...(spent ? { daySpentUntil: isoOf(w.dayReset) } : {}),
    ...(probation ? { probationUntil: isoOf(s.probationUntil) } : {}),
  });
  const through = Math.max(banEnd, probation);
  await recordStep(() =>
    ctx.onLatest(keyId, async (record) =>
      deps.store.update(
        record,
        {
          ...(through ? { unbannedThrough: Math.max(through, record.unbannedThrough ?? 0) } : {}),
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
    wasBannedUntil: banEnd ? isoOf(banEnd) : null,
    liftedDay: spent,
    liftedProbation: probation ? isoOf(s.probationUntil) : null,
  };
}
