/**
 * `reconcile(key)`: brings what API Gateway and the limiter hold for one key to what its record says (the desired
 * state, the only thing an admin command writes). It does not remember what a command meant to do; it looks:
 * - its pool at the gateway: an Enterprise key's bracket pool is complete (reconcile-pool.ts; the stack makes the
 *   standard plans' pools);
 * - an API key or usage plan of its own (made before pools): the record stops naming them (the authorizer then names
 *   its pool member), and they are deleted once no cached authorizer result can name them (the grace period);
 * - its counts: today's counts move to the shard layout of its limits when a change of limits left them elsewhere;
 * - its standing: a spent day an admin lifted starts again; a ban an admin lifted is gone from the limiter's counters
 *   and the gateway's standing; an admin's ban is on both; a spent day decided on limits the key no longer has (it
 *   has not used up its day under the new ones) is forgotten, so the authorizer counts it on its pool member again;
 * - then the record notes the version it was reconciled at: converged is `reconciledVersion === version`.
 * Every step is safe to repeat, and the gateway's calls are paced to its control-plane quotas (pacing.ts), so any
 * failure, however partial, is finished by running it again (`keys reconcile <id>`).
 */
import { limiterShards, LIMITER, type PlanLimits } from '../../contract/plans.ts';
import { PROBATION } from '../../contract/probation.ts';
import { StaleKeyRecordError, limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import type { AdminContext } from './context.ts';
import { layoutShortfall, layoutToLeaveOwnKey } from './key-layout.ts';
import { AdminError } from './ports.ts';
import { ensureBracketPool } from './reconcile-pool.ts';

/** What one reconcile did, and what waits for time to pass (the grace period), on the record it left. */
export interface Reconciled {
  readonly record: KeyRecord;
  readonly did: readonly string[];
  readonly waiting: readonly string[];
}

/** A reconcile that stopped: which step, and why. The next command that finishes it is `keys reconcile <id>`. */
export class ReconcileError extends AdminError {
  readonly keyId: string;
  constructor(keyId: string, step: string, cause: unknown) {
    super(`${step} failed (${describeError(cause)})`);
    this.keyId = keyId;
  }
}

/** An error as one line for an admin, with its cause when it has one (a storage outage says which). */
export const describeError = (err: unknown) =>
  err instanceof AdminError
    ? err.message
    : `${(err as Error)?.name}: ${(err as Error)?.message}` +
      (typeof (err as Error)?.cause === 'string' ? ` (${(err as Error).cause as string})` : '');

/** Whether nothing is pending for a record: its last write has been reconciled. */
export const converged = (r: KeyRecord): boolean => (r.reconciledVersion ?? 0) === (r.version ?? 0);

/** Rounds when other writes keep landing while a reconcile runs (each round looks again). */
const ROUNDS = 4;

/** Limits whose shard layout is `n` counter items (what carryCounts reads of its `from`). */
const layoutOf = (n: number): PlanLimits => ({ perMinute: n * LIMITER.shardPerMinute, perDay: n });

export async function reconcile(ctx: AdminContext, keyId: string): Promise<Reconciled> {
  const did: string[] = [];
  for (let round = 1; ; round++) {
    try {
      return await once(ctx, await ctx.find(keyId), did);
    } catch (err) {
      if (!(err instanceof StaleKeyRecordError)) throw err;
      if (round >= ROUNDS) throw new ReconcileError(keyId, 'the record kept changing (another admin at work?)', err);
    }
  }
}

async function once(ctx: AdminContext, start: KeyRecord, did: string[]): Promise<Reconciled> {
  const { deps } = ctx;
  const { store } = deps;
  const now = ctx.now();
  const waiting: string[] = [];
  let record = start;
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof StaleKeyRecordError || err instanceof ReconcileError) throw err;
      throw new ReconcileError(record.keyId, name, err);
    }
  };
  /** A record write conditional on the version this round knows: another write restarts the round. */
  const write = (changes: Parameters<typeof store.update>[1], remove: string[] = []) =>
    step('writing the key record', async () => (record = await store.update(record, changes, remove)));
  const limits = limitsOf(record);

  if (record.status === 'active' && record.plan === 'enterprise' && limits)
    did.push(...(await step('its Enterprise bracket pool at the gateway', () => ensureBracketPool(ctx, limits))));

  // A key leaves its own API key, and that key is deleted, only once the deployed authorizer names its pool member
  // instead: an older one still names the own key, and would be answered 403 (lib/admin/key-layout.ts). The record
  // stays pending, so the sweep after the deploy moves it.
  const ownKey = record.apiGatewayKeyId || record.usagePlanId || record.retiredApiKeyId || record.retiredUsagePlanId;
  const held = ownKey
    ? layoutShortfall(ctx, layoutToLeaveOwnKey(record), `moving ${record.keyId} off its own API key ${ownKey}`)
    : undefined;
  if (held) waiting.push(held);
  else if (record.apiGatewayKeyId || record.usagePlanId) {
    const since = record.status === 'revoked' && record.revokedAt ? record.revokedAt : new Date(now).toISOString();
    const retired = record.apiGatewayKeyId ?? record.usagePlanId;
    await write(
      {
        ...(record.apiGatewayKeyId ? { retiredApiKeyId: record.apiGatewayKeyId } : {}),
        ...(record.usagePlanId ? { retiredUsagePlanId: record.usagePlanId } : {}),
        retiredAt: since,
      },
      ['apiGatewayKeyId', 'usagePlanId'],
    );
    did.push(`moved into its pool (its own ${retired} is deleted after the grace period)`);
  }

  if (!held && (record.retiredApiKeyId || record.retiredUsagePlanId)) {
    const dueAt = Date.parse(record.retiredAt ?? '1970-01-01T00:00:00Z') + (deps.revokedKeyGraceMs ?? 120_000);
    const what = [
      record.retiredApiKeyId && `API key ${record.retiredApiKeyId}`,
      record.retiredUsagePlanId && `usage plan ${record.retiredUsagePlanId}`,
    ]
      .filter(Boolean)
      .join(' and ');
    if (now < dueAt)
      waiting.push(
        `its old ${what} (deleted from ${new Date(dueAt).toISOString()}, when no cached authorizer result names it)`,
      );
    else {
      const { retiredApiKeyId: key, retiredUsagePlanId: plan } = record;
      if (key) await step(`deleting its old API key ${key}`, () => deps.gateway.deleteKey(key));
      if (plan) await step(`deleting its old usage plan ${plan}`, () => deps.gateway.deletePlan(plan));
      await write({}, ['retiredApiKeyId', 'retiredUsagePlanId', 'retiredAt']);
      did.push(`deleted its old ${what}`);
    }
  }

  if (record.countsShards !== undefined) {
    const from = record.countsShards;
    if (limits && deps.carryCounts && from !== limiterShards(limits)) {
      await step("moving today's counts to its limits' shards", () =>
        deps.carryCounts!(record.keyId, layoutOf(from), limits, now),
      );
      did.push(`moved today's counts from ${from} to ${limiterShards(limits)} shard(s)`);
    }
    await write({}, ['countsShards']);
  }

  if (record.status === 'active' && limits) await standing(ctx, record, limits, now, step, write, did);
  else if (record.dayLifted !== undefined) await write({}, ['dayLifted']);

  if (!converged(record) && !held) await write({ reconciledVersion: (record.version ?? 0) + 1 });
  return { record, did, waiting };
}

type Step = <T>(name: string, run: () => Promise<T>) => Promise<T>;

/** The standing part of a reconcile (see the module comment). */
async function standing(
  ctx: AdminContext,
  record: KeyRecord,
  limits: PlanLimits,
  now: number,
  step: Step,
  write: (changes: Partial<KeyRecord>, remove?: string[]) => Promise<KeyRecord>,
  did: string[],
): Promise<void> {
  const { deps } = ctx;
  const w = windowsAt(now);
  if (record.dayLifted !== undefined) {
    if (record.dayLifted === w.dayStart) {
      await step("starting today's quota again", () => deps.store.liftDay(record.keyId, now));
      did.push("started today's quota again");
    }
    record = await write({}, ['dayLifted']);
  }
  if (record.dayBansReset) {
    const { day, bans } = record.dayBansReset;
    if (day === w.dayStart) {
      await step("setting today's bans back", () => deps.store.resetDayBans(record.keyId, day, bans));
      did.push(`set today's bans back to ${bans}`);
    }
    record = await write({}, ['dayBansReset']);
  }
  const through = record.unbannedThrough ?? 0;
  const u = await step("reading the key's counts", () => deps.limits.usage(record.keyId, limits, w));
  if (u.banUntil && u.banUntil > w.nowSec && u.banUntil <= through && deps.liftBan) {
    await step("lifting the ban on the limiter's counters", () => deps.liftBan!(record.keyId, now));
    did.push("lifted the ban on the limiter's counters");
  }
  const wanted =
    record.bannedUntil && record.bannedUntil > w.nowSec && record.bannedUntil > through ? record.bannedUntil : 0;
  if (wanted && (u.banUntil ?? 0) < wanted) {
    const days = [w.dayStart + 86_400, w.dayStart].filter((d) => d < wanted);
    await step("banning it on the limiter's counters", () => deps.limits.ban(record.keyId, limits, wanted, days));
    did.push(`banned it on the limiter's counters until ${new Date(wanted * 1000).toISOString()}`);
  }
  const st = await step('reading its standing at the gateway', () => deps.store.readStanding(record.hash));
  // A lifted ban that has ended still holds the key on probation at the gateway for a day after (standing.ts).
  if (st.bannedUntil && w.nowSec - st.bannedUntil < PROBATION.seconds && st.bannedUntil <= through) {
    const banUntil = st.bannedUntil;
    await step('lifting its ban at the gateway', () => deps.store.clearStandingPart(record.hash, { banUntil }));
    did.push(banUntil > w.nowSec ? 'lifted its ban at the gateway' : 'lifted its probation at the gateway');
  }
  // Marked as the admin's, so the key is told who banned it; also when a function recorded that end first.
  if (wanted && ((st.bannedUntil ?? 0) < wanted || (st.bannedUntil === wanted && st.bannedBy !== 'admin'))) {
    await step('banning it at the gateway', () =>
      deps.store.noteStanding(record.hash, { bannedUntil: wanted, by: 'admin' }),
    );
    did.push('banned it at the gateway');
  }
  if (st.spentDay === w.dayStart) {
    // Decided on the limits the key had then: under its limits now it may have some of its day left.
    const day = await step("reading the key's counts", () => deps.limits.usage(record.keyId, limits, w));
    if (day.dayCount < limits.perDay) {
      const spentDay = st.spentDay;
      await step('forgetting its spent day at the gateway', () =>
        deps.store.clearStandingPart(record.hash, { spentDay }),
      );
      did.push(`forgot its spent day at the gateway (${day.dayCount} of ${limits.perDay} used today)`);
    }
  }
}
