/**
 * A key's standing as an admin sees it, from the three places it lives: the record (an admin's ban, what an admin
 * lifted), the limiter's counters (a ban, today's count, the day's bans that escalate the next one) and the gateway's
 * standing item (a ban, a spent day: what the authorizer denies on). `keys show`, `keys unban` and `keys set-plan`
 * read it the same way.
 */
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt, type Windows } from '../../lambdas/domain/rate-limit.ts';
import type { AdminContext } from './context.ts';

export interface KeyStanding {
  /** The latest ban not lifted (unix seconds), whoever's: 0 when none. */
  readonly banEnd: number;
  /** Whether today's quota is spent (on the limiter's counters or at the gateway). */
  readonly spent: boolean;
  /** The key's bans today (what escalates its next one). */
  readonly bans: number;
  /** Requests counted this minute and today. */
  readonly minuteCount: number;
  readonly dayCount: number;
  readonly w: Windows;
}

export async function readKeyStanding(ctx: AdminContext, record: KeyRecord): Promise<KeyStanding> {
  const w = windowsAt(ctx.now());
  const limits = limitsOf(record);
  const u = await ctx.deps.limits.usage(record.keyId, limits ?? { perMinute: 1, perDay: 1 }, w);
  const st = await ctx.deps.store.readStanding(record.hash);
  const through = record.unbannedThrough ?? 0;
  const bans = [u.banUntil ?? 0, st.bannedUntil ?? 0, record.bannedUntil ?? 0].filter(
    (t) => t > w.nowSec && t > through,
  );
  return {
    banEnd: bans.length ? Math.max(...bans) : 0,
    spent: st.spentDay === w.dayStart || (!!limits && u.dayCount >= limits.perDay),
    bans: u.bans ?? 0,
    minuteCount: u.minuteCount,
    dayCount: u.dayCount,
    w,
  };
}

export const isoOf = (sec: number) => new Date(sec * 1000).toISOString();
