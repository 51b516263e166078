/** The commands that only read: list, show, usage. */
import { limitsOf } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import type { AdminContext } from './context.ts';
import { view, type KeyView } from './rules.ts';
import { minuteCounts } from './usage-chart.ts';

export async function list(ctx: AdminContext, filter: { plan?: string; owner?: string } = {}): Promise<KeyView[]> {
  return (await ctx.deps.store.list())
    .filter((r) => (!filter.plan || r.plan === filter.plan) && (!filter.owner || r.owner === filter.owner))
    .map(view);
}

export async function show(ctx: AdminContext, keyId: string): Promise<KeyView> {
  return view(await ctx.find(keyId));
}

/** Today's counts of a key from the rate limiter, and its minute-by-minute history when the target keeps one. */
export async function usage(ctx: AdminContext, keyId: string) {
  const { deps } = ctx;
  const record = await ctx.find(keyId);
  const w = windowsAt(ctx.now());
  const limits = limitsOf(record);
  // A key without limits has never been counted on more than one shard.
  const counted = limits ?? { perMinute: 1, perDay: 1 };
  const u = await deps.limits.usage(record.keyId, counted, w);
  return {
    keyId: record.keyId,
    plan: record.plan,
    limits,
    minute: { count: u.minuteCount, resetsAt: new Date(w.minuteReset * 1000).toISOString() },
    day: { count: u.dayCount, resetsAt: new Date(w.dayReset * 1000).toISOString() },
    bannedUntil: u.banUntil ? new Date(u.banUntil * 1000).toISOString() : null,
    ...(deps.history
      ? {
          history: {
            dayStart: w.dayStart,
            nowMinute: w.minuteStart,
            ...minuteCounts(await deps.history(record.keyId, counted, w), u.dayCount),
          },
        }
      : {}),
  };
}
