/**
 * `keys unban <id>`: lifts a key's ban before it ends (15 minutes after the 429s that caused it): the ban on the
 * limiter's counters, the 429s counted towards a new one, and the key's standing at the gateway, so the authorizer
 * lets it through once its cached answer expires and warm functions ask storage again (both within the authorizer
 * cache TTL). A key that is not banned is left alone: nothing is written.
 */
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { view, type KeyView } from './rules.ts';

export async function unban(ctx: AdminContext, keyId: string): Promise<KeyView & { wasBannedUntil: string | null }> {
  const record = await ctx.find(keyId);
  const { deps } = ctx;
  if (!deps.liftBan) throw new AdminError('this target keeps no limiter counters: nothing to unban');
  const u = await deps.limits.usage(record.keyId, { perMinute: 1, perDay: 1 }, windowsAt(ctx.now()));
  if (!u.banUntil) return { ...view(record), wasBannedUntil: null };
  await deps.liftBan(record.keyId, ctx.now());
  await deps.store.clearStanding(record.hash);
  return { ...view(record), wasBannedUntil: new Date(u.banUntil * 1000).toISOString() };
}
