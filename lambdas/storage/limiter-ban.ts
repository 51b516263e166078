/**
 * A limiter's ban decided where no limiter runs: the authorizer's, of a spent key that keeps sending (its requests
 * are denied at the gateway, so the functions' limiter never sees them: domain/keys.ts spentRepeat). Written as the
 * limiter writes its own, so it lasts, escalates, shows in `keys show` and is lifted by `keys unban` as one of the
 * limiter's: counted as the key's nth ban of the UTC day, on every shard's day items (what the functions refuse on)
 * and on the key's standing (what the authorizer denies on). The ban's end is noted as when the key was last told its
 * spent day before the ban is written: stopped between the two, the key is denied as spent (not banned) until it
 * comes back after that, and then banned, one ban later in the day's count.
 */
import type { PlanLimits } from '../../contract/plans.ts';
import { banDays, type Windows } from '../domain/rate-limit.ts';
import type { Telemetry } from '../shared/observability.ts';
import type { Storage } from './client.ts';
import { createLimitStore } from './limit-store.ts';
import { noteSpentTold, noteStanding } from './standing.ts';

/**
 * Bans `subject` (the key id; `hash`: its secret's) as the limiter would at `w`, ending no later than `notAfter`
 * (unix seconds); answers the ban's end.
 */
export async function banAsLimiter(
  storage: Storage,
  telemetry: Telemetry,
  key: { readonly subject: string; readonly hash: string; readonly limits: PlanLimits },
  w: Windows,
  notAfter = Infinity,
): Promise<number> {
  const counters = createLimitStore(storage, telemetry);
  // Counted before it is written, as the limiter does: a failure between the two errs towards a longer next ban.
  const nth = await counters.countBan(key.subject, w.dayStart, w.minuteStart);
  const full = banDays(w, nth);
  const banUntil = Math.min(full.banUntil, notAfter);
  const days = full.days.filter((day) => day < banUntil);
  await noteSpentTold(storage, key.hash, banUntil, false);
  await Promise.all([
    counters.ban(key.subject, key.limits, banUntil, days),
    noteStanding(storage, key.hash, { bannedUntil: banUntil }),
  ]);
  return banUntil;
}
