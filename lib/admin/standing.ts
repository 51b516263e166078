/**
 * A key's standing as an admin sees it, from the three places it lives: the record (an admin's ban, what an admin
 * lifted), the limiter's counters (a ban, today's count, the day's bans that escalate the next one) and the gateway's
 * standing item (a ban, a spent day, and a ban that ended within PROBATION.seconds: probation, counted on a
 * probation shard of its pool at the gateway, contract/probation.ts). `keys show`, `keys unban` and `keys set-plan`
 * read it the same way.
 */
import { enterpriseBracket } from '../../contract/brackets.ts';
import { PROBATION, payingProbationShardOf, probationShardOf } from '../../contract/probation.ts';
import { isPoolMemberKey } from '../../contract/key-pool.ts';
import { limitsOf, usageKeyOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { recordedBracketProbation } from '../../lambdas/storage/bracket-probation.ts';
import { windowsAt, type Windows } from '../../lambdas/domain/rate-limit.ts';
import type { AdminContext } from './context.ts';

export interface KeyStanding {
  /** The latest ban not lifted (unix seconds), whoever's: 0 when none. */
  readonly banEnd: number;
  /** Whether today's quota is spent (on the limiter's counters or at the gateway) and not lifted. */
  readonly spent: boolean;
  /** The end of the probation of a ban the gateway recorded (unix seconds): 0 when none. */
  readonly probationUntil: number;
  /** The ban end that probation follows (what `unban` lifts to end it). */
  readonly probationOf: number;
  /** Where a key on probation is counted at the gateway, said for an admin. */
  readonly probationShard?: string;
  /** The key's bans today (what escalates its next one). */
  readonly bans: number;
  /** Requests counted this minute and today. */
  readonly minuteCount: number;
  readonly dayCount: number;
  readonly w: Windows;
}

/**
 * Where a pooled key on probation is counted at the gateway, as an admin reads it; none for a key with an API key of
 * its own. An Enterprise bracket's probation member counts only once the admin tool recorded it (the authorizer reads
 * the same record, lambdas/storage/bracket-probation.ts); before that the key stays on its ordinary member.
 */
async function probationShard(ctx: AdminContext, record: KeyRecord): Promise<string | undefined> {
  const limits = limitsOf(record);
  if (!limits || !isPoolMemberKey(usageKeyOf(record, ctx.deps.stage))) return undefined;
  if (record.plan === 'free') return `free pool probation shard ${probationShardOf(record.keyId)}`;
  if (record.plan === 'enterprise') {
    const bracket = enterpriseBracket(limits).id;
    const { storage } = ctx.deps;
    if (storage && (await recordedBracketProbation(storage, bracket)) === undefined)
      return (
        `its ordinary member of Enterprise bracket ${bracket}: the bracket's probation member is not recorded yet ` +
        `(\`keys reconcile --all\` makes and records it)`
      );
    return `the probation member of Enterprise bracket ${bracket}`;
  }
  return `${record.plan} pool probation shard ${payingProbationShardOf(record.keyId, record.plan)}`;
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
  const spent = st.spentDay === w.dayStart || (!!limits && u.dayCount >= limits.perDay);
  const ended = st.bannedUntil ?? 0;
  const onProbation = ended > 0 && ended <= w.nowSec && w.nowSec - ended < PROBATION.seconds && ended > through;
  const shard = onProbation ? await probationShard(ctx, record) : undefined;
  return {
    banEnd: bans.length ? Math.max(...bans) : 0,
    spent: spent && record.dayLifted !== w.dayStart,
    probationUntil: onProbation ? ended + PROBATION.seconds : 0,
    probationOf: onProbation ? ended : 0,
    ...(shard ? { probationShard: shard } : {}),
    bans: u.bans ?? 0,
    minuteCount: u.minuteCount,
    dayCount: u.dayCount,
    w,
  };
}

export const isoOf = (sec: number) => new Date(sec * 1000).toISOString();
