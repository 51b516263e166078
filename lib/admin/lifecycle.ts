/**
 * The commands that change keys: create, revoke, restore, rotate, set-plan, ban. Each is one DynamoDB transaction:
 * the key's record (conditional on the version read, re-applied by onLatest when another write came first), its
 * history entry (audit.ts) and what it changes of the key's standing and counters (lambdas/storage/standing-admin.ts),
 * landed whole or not at all, so the same command again finishes whatever a failure left. None calls API Gateway:
 * every key of a plan counts against its plan's one API key, which the stack makes.
 */
import { randomUUID } from 'node:crypto';
import { PLANS, limiterShards, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import {
  generateKey,
  generateKeyId,
  hashKey,
  limitsOf,
  type KeyOverlapRef,
  type KeyRecord,
  type KeyScope,
} from '../../lambdas/domain/keys.ts';
import { expiryOf } from './when.ts';
import type { AuditStanding } from '../../lambdas/storage/audit-store.ts';
import type { StandingChange } from '../../lambdas/storage/standing-admin.ts';
import { entryOf, type Change } from './audit.ts';
import type { AdminContext } from './context.ts';
import { AdminError, describeError } from './ports.ts';
import { shellWord } from './printed.ts';
import {
  CHECK_KEY_OWNER,
  checkLimits,
  checkOwner,
  refuseOwnKeyAuthorizer,
  sameLimits,
  view,
  type KeyView,
} from './rules.ts';
import { isoOf, readKeyStanding, type KeyStanding } from './standing.ts';

export interface PlanInput {
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
}

/**
 * A command's reads and its transaction: a failure there (other than the command's own refusal) changed nothing, or
 * it is not known whether the transaction landed (its answer was lost); either way the same command again finishes it
 * (each finds a landed write done).
 */
export async function recordStep<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AdminError) throw err;
    throw new AdminError(
      `the key record was not changed, or its answer was lost (${describeError(err)}): run the same command again`,
    );
  }
}

/**
 * The attribution of a change this command is about to make (audit.ts): who is asked first, so a principal that
 * cannot be named stops the command before anything is written.
 */
export async function changeBy(
  ctx: AdminContext,
  command: string,
  result: (after: KeyRecord) => string,
  standingBefore?: AuditStanding,
): Promise<Change> {
  const who = await ctx.actor();
  return { who, stage: ctx.deps.stage, now: ctx.now, command, result, ...(standingBefore ? { standingBefore } : {}) };
}

const limitsText = (r: KeyRecord) => {
  const l = limitsOf(r);
  return l ? ` (${l.perMinute}/min, ${l.perDay}/day)` : '';
};

/** What `keys create` shows: the secret, once, and the key it is for; `finished`: a key an earlier create left. */
export interface Created {
  readonly key: string;
  readonly record: KeyView;
  readonly finished: boolean;
}

/**
 * Where the record of a key whose create has shown no working secret yet is kept: a placeholder in place of a
 * secret's hash (`#` never occurs in one: hashKey is hex), so no presented secret can find it.
 */
const UNDELIVERED_HASH = 'undelivered#';

/**
 * The create that finishes a key whose create stopped before showing a working secret: the same command again (it
 * finds the key by its owner, plan and limits, and gives it a secret).
 */
export const finishingCreate = (r: {
  owner: string;
  plan: PlanName;
  limits?: PlanLimits;
  scope?: KeyScope;
  validUntil?: number;
}) =>
  `keys create --owner ${shellWord(r.owner)} --plan ${r.plan}` +
  // A view's limits are also a fixed plan's; only Enterprise takes them on the command line.
  (r.plan === 'enterprise' && r.limits ? ` --per-minute ${r.limits.perMinute} --per-day ${r.limits.perDay}` : '') +
  (r.scope === 'read' ? ' --scope read' : '') +
  // The moment, not the length given: the same create later expires the key when the first one said.
  (r.validUntil ? ` --expires ${isoOf(r.validUntil)}` : '');

/** Commands that need a working secret refuse a key whose create has not shown one, naming what finishes it. */
function refuseUndelivered(r: KeyRecord): void {
  if (r.undelivered)
    throw new AdminError(
      `key ${r.keyId} has no working secret yet (its create stopped before showing one): run \`${finishingCreate(r)}\`, ` +
        'which gives it one',
    );
}

/**
 * A new key, made so that no key is ever usable with a secret nobody saw, whatever stops the command:
 * 1. its record is written under a placeholder hash (`undelivered`): no secret works for it;
 * 2. a secret is made and shown (`show`: the CLI prints it, on stdout, now);
 * 3. the record moves under that secret's hash (one transaction, conditional on the record read, with the history
 *    entry): from here the secret shown works.
 * A create that stops between 1 and 3 (killed, or an answer lost) leaves a key no secret works for: the same create
 * run again finds it (an undelivered key of that owner, plan and limits: the owner's pending keys of that plan) and
 * finishes it with a fresh secret (the one it shows) under the same key id, never a second key. A secret shown by a
 * run that stopped before 3 never works.
 */
export async function create(
  ctx: AdminContext,
  input: CreateInput,
  show: (created: Created) => void = () => {},
): Promise<Created> {
  const owner = checkOwner(input.owner);
  if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
  refuseOwnKeyAuthorizer(ctx.deps, input.plan, owner, `a ${input.plan} key`);
  const limits = checkLimits(input.plan, input.perMinute, input.perDay);
  refuseCheckKeyTerms(owner, input.scope === 'read' || input.expires !== undefined);
  const validUntil = input.expires !== undefined ? expiryOf(input.expires, ctx.now()) : undefined;
  const terms = {
    ...(input.scope === 'read' ? { scope: 'read' as const } : {}),
    ...(validUntil ? { validUntil } : {}),
  };
  const again = finishingCreate({ owner, plan: input.plan, ...(limits ? { limits } : {}), ...terms });
  const left = await undeliveredKey(ctx, owner, input.plan, limits).catch((err: unknown) => {
    if (err instanceof AdminError) throw err;
    throw new AdminError(`no key was created (${describeError(err)}): run \`${again}\``);
  });
  // A create run again after it finished (killed after its last write, its answer lost): the key it made is the
  // owner's newest of this plan, made minutes ago. A second key is made only when asked for.
  if (!left && !input.another) {
    const recent = await recentKey(ctx, owner, input.plan, limits).catch((err: unknown) => {
      throw new AdminError(`no key was created (${describeError(err)}): run \`${again}\``);
    });
    if (recent)
      throw new AdminError(
        `${recent.keyId} was created for ${recent.owner} on ${input.plan} at ${recent.createdAt}, ` +
          `${Math.round((ctx.now() - Date.parse(recent.createdAt)) / 60_000)} minute(s) ago ` +
          `(${(await lastChange(ctx, recent.keyId)) ?? 'its history could not be read'}): its secret is the one that ` +
          `create printed; nothing was created (see \`keys show ${recent.keyId}\`; add --another to make a second key)`,
      );
  }
  const change = await changeBy(
    ctx,
    `create --plan ${input.plan}${terms.scope ? ' --scope read' : ''}${validUntil ? ` --expires ${isoOf(validUntil)}` : ''}`,
    (r) => `created on ${r.plan}${limitsText(r)}${left ? ' (its secret given by a create run again)' : ''}`,
  );
  let pending = left;
  if (!pending) {
    const keyId = generateKeyId();
    // Version 0 (no version attribute): the write that makes it usable is its version 1, as a key's first write was.
    const record: KeyRecord = {
      hash: `${UNDELIVERED_HASH}${keyId}`,
      keyId,
      owner,
      plan: input.plan,
      ...(limits ? { limits } : {}),
      status: 'active',
      createdAt: new Date(ctx.now()).toISOString(),
      ...terms,
      undelivered: true,
      writeId: randomUUID(),
    };
    await ctx.deps.store.put(record).catch(async (err: unknown) => {
      // Its answer lost after it applied: found, it goes on (and the same command again would find it too).
      const landed = await ctx.deps.store.getById(keyId).catch(() => undefined);
      if (landed?.hash === record.hash) return;
      throw new AdminError(`no key was created, or its answer was lost (${describeError(err)}): run \`${again}\``);
    });
    pending = record;
  }
  const key = generateKey();
  // This run's terms, not those of the run that left the key: what its history entry says is what the key gets.
  const { scope: _s, validUntil: _v, ...base } = usable(pending, hashKey(key));
  const next: KeyRecord = { ...base, ...terms };
  const created: Created = { key, record: view(next), finished: !!left };
  show(created);
  await activate(ctx, pending, next, entryOf(change, undefined), again);
  return created;
}

/**
 * The oldest key of this owner, plan and limits whose create stopped before showing a working secret (from the
 * listing's pending partition: the owner's few keys waiting for something), read again from the table (the index may
 * lag a write); none: undefined.
 */
async function undeliveredKey(
  ctx: AdminContext,
  owner: string,
  plan: PlanName,
  limits: PlanLimits | undefined,
): Promise<KeyRecord | undefined> {
  const found: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await ctx.deps.store.listPage({ owner, plan, status: 'active', pending: true }, 100, after);
    found.push(...page.records.filter((r) => r.undelivered && sameLimits(r.limits, limits)));
    after = page.next;
  } while (after);
  for (const r of found.sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    const now = await ctx.deps.store.getById(r.keyId);
    if (now?.undelivered && now.status === 'active' && now.plan === plan && sameLimits(now.limits, limits)) return now;
  }
  return undefined;
}

/** What `keys create` takes. */
export interface CreateInput extends PlanInput {
  readonly owner: string;
  /** `--scope read`: a key that may only read. */
  readonly scope?: KeyScope;
  /** `--expires <date|duration>` (when.ts). */
  readonly expires?: string;
  /** `--another`: a second key for an owner whose key of this plan was made minutes ago. */
  readonly another?: boolean;
}

/**
 * How long after a create the same create is taken for a rerun (its answer lost after the last write), not a second
 * key: a rerun comes within minutes, and a second key for one owner and plan is rare and said with --another.
 */
export const CREATE_RERUN_MINUTES = 15;

/** The owner's newest working key of this plan and limits made within CREATE_RERUN_MINUTES; undefined: none. */
async function recentKey(
  ctx: AdminContext,
  owner: string,
  plan: PlanName,
  limits: PlanLimits | undefined,
): Promise<KeyRecord | undefined> {
  const since = ctx.now() - CREATE_RERUN_MINUTES * 60_000;
  let newest: KeyRecord | undefined;
  let after: string | undefined;
  // An owner's keys of one plan are few; the bound keeps a shared owner name from making this a sweep.
  for (let page = 0; page < 10; page++) {
    const out = await ctx.deps.store.listPage({ owner, plan, status: 'active' }, 100, after);
    for (const r of out.records)
      if (!r.undelivered && sameLimits(r.limits, limits) && Date.parse(r.createdAt) >= since)
        if (!newest || r.createdAt > newest.createdAt) newest = r;
    after = out.next;
    if (!after) break;
  }
  return newest;
}

/** The record of a key left undelivered, once it moves under its secret's hash: usable, one version on. */
function usable(pending: KeyRecord, hash: string): KeyRecord {
  const { undelivered: _u, ...rest } = pending;
  return { ...rest, hash, version: (pending.version ?? 0) + 1, writeId: randomUUID() };
}

/**
 * Step 3 of create: the record moves under the shown secret's hash. A failure is told with what the secret shown
 * is now worth and the one command that finishes the key.
 */
async function activate(
  ctx: AdminContext,
  pending: KeyRecord,
  next: KeyRecord,
  audit: ReturnType<typeof entryOf>,
  again: string,
): Promise<void> {
  const { keyId } = pending;
  try {
    await ctx.deps.store.replaceHash(pending, next, { audit });
    return;
  } catch (err) {
    // Applied, its answer lost: the secret shown works.
    const now = await ctx.deps.store.getById(keyId).catch(() => undefined);
    if (now?.hash === next.hash) return;
    if (!now)
      throw new AdminError(
        `it is not known whether the API key shown above works (${describeError(err)}): run \`keys show ${keyId}\`: ` +
          'it says so, and the command that finishes the key if it does not',
      );
    if (now.status !== 'active')
      throw new AdminError(`key ${keyId} was revoked while this create ran: the API key shown above does not work`);
    if (!now.undelivered)
      throw new AdminError(
        `key ${keyId} was given its secret by another run of this create, first: the API key shown above does not ` +
          `work, the one that run showed does (see \`keys show ${keyId}\`; only if that secret is lost too, rotate ` +
          'the key)',
      );
    throw new AdminError(
      `key ${keyId} is made, but the API key shown above does not work (${describeError(err)}): run \`${again}\`: ` +
        'it gives the key a new secret, the one to use',
    );
  }
}

/** Marks the key revoked: the authorizer refuses it from now on (after its cache TTL). Revoking twice changes nothing. */
export async function revoke(
  ctx: AdminContext,
  keyId: string,
): Promise<KeyView & { already: boolean; revokedBy?: string }> {
  const revokedAt = new Date(ctx.now()).toISOString();
  const change = await changeBy(
    ctx,
    'revoke',
    () => `revoked (\`keys restore ${keyId}\` until ${restoreDeadline(revokedAt)})`,
  );
  const { record, already } = await recordStep(() =>
    ctx.onLatest(keyId, async (record) =>
      record.status === 'revoked'
        ? { record, already: true }
        : {
            record: await ctx.deps.store.update(record, { status: 'revoked', revokedAt }, [], {
              audit: entryOf(change, record),
            }),
            already: false,
          },
    ),
  );
  // Revoked before: by whom and when, from its history (another admin's revoke, or this one's earlier run).
  const by = already ? await lastChange(ctx, keyId) : undefined;
  return { ...view(record), already, ...(by ? { revokedBy: by } : {}) };
}

/** What `keys rotate` did: the new secret, and until when each earlier secret is still accepted. */
export interface Rotated {
  readonly key: string;
  readonly record: KeyView;
  /** The secret this rotation replaced: accepted until then (`--overlap`), or null (refused from now). */
  readonly oldSecretUntil: string | null;
  /** Earlier secrets whose overlap still runs, carried to the new secret: each is accepted until its end, as promised. */
  readonly carried: readonly string[];
  /** Earlier overlaps this rotation ended (`--end-overlaps`). */
  readonly ended: readonly string[];
}

/**
 * A new secret on the same key id and plan. The secret it replaces stops working at once (in the cloud, once cached
 * authorizer results expire), or at the end of `--overlap`. An earlier secret whose overlap still runs keeps it: the
 * rotation points it at the new secret, so what the earlier rotation printed stays true; `--end-overlaps` ends them
 * instead (a leaked secret). At most MAX_OVERLAPS earlier secrets run at once. The key's standing at the gateway is
 * kept by the hash of its secret: an admin's ban is noted on the new one in the same transaction.
 */
export async function rotate(
  ctx: AdminContext,
  keyId: string,
  overlapMinutes = 0,
  options: { readonly endOverlaps?: boolean } = {},
): Promise<Rotated> {
  if (!Number.isSafeInteger(overlapMinutes) || overlapMinutes < 0 || overlapMinutes > MAX_OVERLAP_MINUTES)
    throw new AdminError(`--overlap must be whole minutes from 0 to ${MAX_OVERLAP_MINUTES.toLocaleString('en-US')}`);
  const rotatedAt = new Date(ctx.now()).toISOString();
  const nowSec = Math.floor(ctx.now() / 1000);
  const overlapUntil = overlapMinutes ? nowSec + overlapMinutes * 60 : undefined;
  const oldSecretUntil = overlapUntil ? isoOf(overlapUntil) : null;
  let kept: readonly KeyOverlapRef[] = [];
  let ended: readonly KeyOverlapRef[] = [];
  const change = await changeBy(
    ctx,
    `rotate${overlapMinutes ? ` --overlap ${overlapMinutes}` : ''}${options.endOverlaps ? ' --end-overlaps' : ''}`,
    () =>
      (oldSecretUntil
        ? `rotated; the old secret is accepted until ${oldSecretUntil}`
        : 'rotated; the old secret is refused') +
      (kept.length ? `; earlier secrets still accepted until ${kept.map((o) => isoOf(o.until)).join(', ')}` : '') +
      (ended.length ? `; ended ${ended.length} earlier overlap(s)` : ''),
  );
  // The secret this command set out to replace: when another rotation replaced it first (two admins at once), this
  // one stops, or both would print a secret and only the later would work.
  let replacing: string | undefined;
  const { key, record } = await recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      if (record.status !== 'active')
        throw new AdminError(`key ${keyId} is ${record.status}: only active keys can be rotated`);
      // Its secret is given by its create run again, which shows it before the write that makes it work.
      refuseUndelivered(record);
      replacing ??= record.hash;
      if (record.hash !== replacing) throw await rotatedMeanwhile(ctx, record, !!options.endOverlaps);
      const running = (record.overlaps ?? []).filter((o) => o.until > nowSec);
      kept = options.endOverlaps ? [] : running;
      ended = options.endOverlaps ? running : [];
      const overlaps = [...kept, ...(overlapUntil ? [{ hash: record.hash, until: overlapUntil }] : [])];
      if (overlaps.length > MAX_OVERLAPS)
        throw new AdminError(
          `key ${keyId} already has ${running.length} earlier secrets accepted (until ` +
            `${running.map((o) => isoOf(o.until)).join(', ')}): rotate after ${isoOf(running[0]!.until)}, ` +
            'rotate without --overlap, or add --end-overlaps to refuse them now; nothing changed',
        );
      const secret = generateKey();
      const { overlaps: _was, ...rest } = record;
      const next: KeyRecord = {
        ...rest,
        hash: hashKey(secret),
        rotatedAt,
        version: (record.version ?? 0) + 1,
        ...(overlaps.length ? { overlaps } : {}),
      };
      const ban = adminBanOf(ctx, record);
      await ctx.deps.store.replaceHash(
        record,
        { ...next, writeId: randomUUID() },
        {
          ...(overlapUntil ? { overlapUntil } : {}),
          ...(kept.length ? { carried: kept } : {}),
          audit: entryOf(change, record),
          ...(ban ? { standing: { change: { ban }, at: ctx.now() } } : {}),
        },
      );
      return { key: secret, record: next };
    }),
  );
  return {
    key,
    record: view(record),
    oldSecretUntil,
    carried: kept.map((o) => isoOf(o.until)),
    ended: ended.map((o) => isoOf(o.until)),
  };
}

/**
 * Earlier secrets a key accepts at once at most (each a rotation's `--overlap`): three is a rotation a day for a
 * customer's slow deploys with room for a mistake; every one is a secret that still works, and a transaction moves
 * each at the next rotation.
 */
export const MAX_OVERLAPS = 3;

/** The refusal of a rotation another command made first: what it did, who made it and when (its history entry). */
async function rotatedMeanwhile(ctx: AdminContext, record: KeyRecord, endOverlaps: boolean): Promise<AdminError> {
  const by = await lastChange(ctx, record.keyId);
  const running = (record.overlaps ?? []).filter((o) => o.until > Math.floor(ctx.now() / 1000));
  return new AdminError(
    `key ${record.keyId} was rotated by another command while this one ran (${by ?? `at ${record.rotatedAt ?? 'an unknown time'}`}): ` +
      'its secret is the one that command printed, and what it printed about earlier secrets holds; nothing changed ' +
      `here (see \`keys history ${record.keyId}\`)` +
      // Asked to end the earlier secrets: they still work, and only a rotation run again with the option ends them.
      (endOverlaps && running.length
        ? `; ${running.length} earlier secret(s) are still accepted (until ${running.map((o) => isoOf(o.until)).join(', ')}): ` +
          'a rotation with --end-overlaps ends them, and replaces the secret that command printed too'
        : ''),
  );
}

/** The key's latest history entry as "<command> by <actor> at <time>"; undefined when it cannot be read. */
export async function lastChange(ctx: AdminContext, keyId: string): Promise<string | undefined> {
  const entries = await ctx.deps.store.history(keyId).catch(() => []);
  const e = entries[entries.length - 1];
  return e ? `keys ${e.command} by ${e.actor} at ${e.at}: ${e.result}` : undefined;
}

/** An admin's ban the key is under now (not lifted since): what its standing and counters carry. */
function adminBanOf(ctx: AdminContext, r: KeyRecord): StandingChange['ban'] {
  const nowSec = Math.floor(ctx.now() / 1000);
  const until = r.bannedUntil ?? 0;
  if (until <= nowSec || until <= (r.unbannedThrough ?? 0)) return undefined;
  return { until, limits: limitsOf(r) ?? { perMinute: 1, perDay: 1 } };
}

/**
 * The longest `--overlap` of a rotation: a day. Long enough for a customer to deploy a new secret on a working day;
 * bounded, because a rotation is often made because the old secret leaked, and every minute of overlap is a minute
 * it still works.
 */
export const MAX_OVERLAP_MINUTES = 1440;

/**
 * How long after a revoke `keys restore` brings a key back: a week. A revoke by mistake is noticed within days (the
 * customer's requests get 401); past that, a revoked secret may have been discarded or leaked, and the customer is
 * given a new key instead.
 */
export const RESTORE_WINDOW_DAYS = 7;

const restoreDeadline = (revokedAt: string) =>
  new Date(Date.parse(revokedAt) + RESTORE_WINDOW_DAYS * 86_400_000).toISOString();

/**
 * `keys restore <id>`: a key revoked within RESTORE_WINDOW_DAYS is active again, with the same secret (its record
 * kept its hash), plan and limits; served once cached authorizer results expire. Restoring an active key changes
 * nothing.
 */
export async function restore(ctx: AdminContext, keyId: string): Promise<KeyView & { already: boolean }> {
  const change = await changeBy(ctx, 'restore', (r) => `restored on ${r.plan}${limitsText(r)}`);
  const { record, already } = await recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      if (record.status === 'active') return { record, already: true };
      refuseOwnKeyAuthorizer(ctx.deps, record.plan, record.owner, `restoring ${keyId} (${record.plan})`);
      const deadline = restoreDeadline(record.revokedAt ?? '1970-01-01T00:00:00Z');
      if (ctx.now() > Date.parse(deadline))
        throw new AdminError(
          `key ${keyId} was revoked at ${record.revokedAt ?? 'an unknown time'}, more than ${RESTORE_WINDOW_DAYS} days ago: ` +
            'it can no longer be restored; create a new key for the customer',
        );
      const restored = await ctx.deps.store.update(record, { status: 'active' }, ['revokedAt'], {
        audit: entryOf(change, record),
      });
      return { record: restored, already: false };
    }),
  );
  return { ...view(record), already };
}

/** The key after set-plan, and `changed: false` when it already had that plan and those limits (nothing written). */
export type PlanChange = KeyView & {
  readonly changed: boolean;
  /** Its standing before the move and after it (absent when it could not be read again). */
  readonly standing?: { readonly before: MoveStanding; readonly after?: MoveStanding };
  /** A move back the same day: the ban it lifted (through its end) and today's bans set back to. */
  readonly undid?: { readonly liftedBanUntil: string | null; readonly bansToday: number | null };
  /** Unchanged because another command moved it there while this one ran: that change, who made it and when. */
  readonly movedBy?: string;
  /** Sent this minute over the new per-minute limit: it gets 429s, and a ban if it keeps on. */
  readonly overMinute?: { readonly count: number; readonly perMinute: number };
};

type MoveStanding = AuditStanding & { readonly dayCount: number; readonly bans: number };

/**
 * Moves a key to another plan (or sets an Enterprise key's limits; one of them alone keeps the other), in one
 * transaction with what the move changes beside the record: a spent day decided on the old limits is forgotten at the
 * gateway when the new ones leave some of the day, and today's counts move to the new limits' shard layout when it
 * is another (the limiter splits a key over more counters above LIMITER.shardPerMinute). A key already on that plan
 * with those limits is left alone (`changed: false`).
 */
export async function setPlan(ctx: AdminContext, keyId: string, input: PlanInput): Promise<PlanChange> {
  if (!(input.plan in PLANS)) throw new AdminError(`unknown plan ${input.plan}`);
  const first = await recordStep(() => ctx.find(keyId));
  if (first.status !== 'active') throw new AdminError(`key ${keyId} is ${first.status}: only active keys change plan`);
  refuseOwnKeyAuthorizer(ctx.deps, input.plan, first.owner, `moving ${keyId} to ${input.plan}`);
  // Its create run again finds it by its plan: a move now would leave it to no create.
  refuseUndelivered(first);
  const current = first.plan === 'enterprise' ? limitsOf(first) : undefined;
  const limits = checkLimits(input.plan, input.perMinute, input.perDay, current);
  const same = (r: KeyRecord) => r.status === 'active' && r.plan === input.plan && sameLimits(r.limits, limits);
  if (same(first)) return { ...view(first), changed: false };
  const before = await recordStep(() => readKeyStanding(ctx, first));
  // Set when the write is made (a move back: what it undoes), read by the entry's result line it writes.
  let undone: Undone | undefined;
  const change = await changeBy(
    ctx,
    `set-plan ${input.plan}${limits ? ` --per-minute ${limits.perMinute} --per-day ${limits.perDay}` : ''}`,
    (r) =>
      `moved ${first.plan}${limitsText(first)} → ${r.plan}${limitsText(r)}` +
      (undone ? ", back where it was before today's first move: what that move caused is lifted" : ''),
    standingOf(before),
  );
  const day = before.w.dayStart;
  const to = limits ?? PLANS[input.plan].limits!;
  let latest = first;
  const updated = await recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      latest = record;
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
      if (same(record)) return undefined;
      // Another command moved it while this one ran (two admins at once): applying this move over that one would
      // have both print "Moved" and only the later hold.
      if (record.plan !== first.plan || !sameLimits(record.limits, first.limits))
        throw new AdminError(
          `key ${keyId} was moved to ${record.plan}${limitsText(record)} by another command while this one ran ` +
            `(${(await lastChange(ctx, keyId)) ?? 'its history could not be read'}): ` +
            `nothing changed here; run \`keys set-plan ${keyId} ${input.plan}${limits ? ` --per-minute ${limits.perMinute} --per-day ${limits.perDay}` : ''}\` again if it should still move`,
        );
      const from = limitsOf(record) ?? { perMinute: 1, perDay: 1 };
      undone = undoOf(record, input.plan, limits, before);
      const standing: StandingChange = {
        spentUnder: to.perDay,
        ...(limiterShards(from) !== limiterShards(to) ? { layout: to } : {}),
        ...(undone?.through ? { liftBansThrough: undone.through } : {}),
        ...(undone?.bans !== undefined ? { dayBans: undone.bans } : {}),
      };
      return ctx.deps.store.update(
        record,
        {
          plan: input.plan,
          ...(limits ? { limits } : {}),
          ...(undone
            ? undone.through > (record.unbannedThrough ?? 0)
              ? { unbannedThrough: undone.through }
              : {}
            : record.planMove?.day === day
              ? {}
              : {
                  planMove: {
                    plan: record.plan,
                    ...(record.limits ? { limits: record.limits } : {}),
                    ...moveStanding(before),
                  },
                }),
        },
        [...(limits ? [] : ['limits']), ...(undone ? ['planMove'] : [])],
        { audit: entryOf(change, record), standing: { change: standing, at: ctx.now() } },
      );
    }),
  );
  // Already where it was asked to go (another command moved it there meanwhile): said of the record as it is now.
  if (!updated)
    return {
      ...view(latest),
      changed: false,
      ...(latest.version !== first.version ? { movedBy: (await lastChange(ctx, keyId)) ?? 'another command' } : {}),
    };
  // What the move did to its standing, read again; a failed read only leaves that out (the change is made).
  const after = await readKeyStanding(ctx, updated).catch(() => undefined);
  return {
    ...view(updated),
    changed: true,
    standing: { before: standingOf(before), ...(after ? { after: standingOf(after) } : {}) },
    ...(undone
      ? { undid: { liftedBanUntil: undone.through ? isoOf(undone.through) : null, bansToday: undone.bans ?? null } }
      : {}),
    ...(after && limitsOf(updated) && after.minuteCount > limitsOf(updated)!.perMinute
      ? { overMinute: { count: after.minuteCount, perMinute: limitsOf(updated)!.perMinute } }
      : {}),
  };
}

/** A standing as an entry and set-plan's output say it: ISO ends, only what there is. */
function standingOf(s: KeyStanding): MoveStanding {
  return {
    ...(s.banEnd ? { bannedUntil: isoOf(s.banEnd) } : {}),
    ...(s.spent ? { daySpentUntil: isoOf(s.w.dayReset) } : {}),
    dayCount: s.dayCount,
    bans: s.bans,
  };
}

/** What a move remembers of the standing it left, so a move back the same day can tell what the move caused. */
const moveStanding = (s: KeyStanding) => ({ day: s.w.dayStart, banEnd: s.banEnd, bans: s.bans });

/** What a move back undoes: the bans it caused lifted through `through`, today's bans back to `bans`. */
interface Undone {
  readonly through: number;
  readonly bans?: number;
}

/**
 * A set-plan back to where the key was before its first move of the day is an admin undoing a mistake (a busy key
 * downgraded by error, banned for the 429s the lower limits gave it): the bans that began after that move (ending
 * later than any ban it had then) are lifted, and today's ban count goes back to what it was,
 * so the key is neither refused nor escalated for the admin's error. A ban it had before the move stays.
 */
function undoOf(
  record: KeyRecord,
  plan: PlanName,
  limits: PlanLimits | undefined,
  now: KeyStanding,
): Undone | undefined {
  const m = record.planMove;
  if (!m || m.day !== now.w.dayStart || m.plan !== plan || !sameLimits(m.limits, limits)) return undefined;
  // An admin's own ban stays: lifting bans through the caused one's end would lift it too (unbannedThrough).
  const adminBan = (record.bannedUntil ?? 0) > now.w.nowSec && record.bannedUntil! > (record.unbannedThrough ?? 0);
  const caused = adminBan ? 0 : now.banEnd;
  return {
    through: caused > m.banEnd ? caused : 0,
    ...(now.bans > m.bans ? { bans: m.bans } : {}),
  };
}

/**
 * `keys ban <id>`: refuses the key until `minutes` from now, at the gateway (its standing: the authorizer denies it)
 * and in the functions (its counters: the limiter refuses it while a cached Allow lasts), in the ban's transaction
 * (an admin's ban, on the record; `keys unban` lifts it).
 */
export async function ban(ctx: AdminContext, keyId: string, minutes: number): Promise<KeyView> {
  if (!Number.isSafeInteger(minutes) || minutes < 1 || minutes > 1440)
    throw new AdminError('--minutes must be a whole number from 1 to 1,440 (a day)');
  const bannedUntil = Math.floor(ctx.now() / 1000) + minutes * 60;
  const change = await changeBy(
    ctx,
    `ban --minutes ${minutes}`,
    () => `banned until ${new Date(bannedUntil * 1000).toISOString()}`,
  );
  const record = await recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}`);
      refuseUndelivered(record);
      const limits = limitsOf(record) ?? { perMinute: 1, perDay: 1 };
      return ctx.deps.store.update(record, { bannedUntil }, ['unbannedThrough'], {
        audit: entryOf(change, record),
        standing: { change: { ban: { until: bannedUntil, limits } }, at: ctx.now() },
      });
    }),
  );
  return view(record);
}

/** The key after set-expiry or set-scope; `changed: false` when it already had that (nothing written). */
export type TermsChange = KeyView & { readonly changed: boolean };

/**
 * `keys set-expiry <id> <date|duration|never>`: when the key expires (when.ts), or `never`. Applies to every secret
 * of the key, an overlap's too (the authorizer reads the current record). An expired key can be given a later expiry
 * (within its notice, or later still): its secret works again once cached authorizer results expire.
 */
export async function setExpiry(ctx: AdminContext, keyId: string, when: string): Promise<TermsChange> {
  const validUntil = when === 'never' ? undefined : expiryOf(when, ctx.now(), 'the expiry');
  const said = validUntil ? `expires at ${isoOf(validUntil)}` : 'never expires';
  const change = await changeBy(ctx, `set-expiry ${validUntil ? isoOf(validUntil) : 'never'}`, () => said);
  let first: number | undefined | null = null;
  return recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}: only active keys change`);
      refuseCheckKeyTerms(record.owner, true);
      if (record.validUntil === validUntil) return { ...view(record), changed: false };
      if (first === null) first = record.validUntil;
      else if (record.validUntil !== first) throw await changedMeanwhile(ctx, keyId, 'the expiry');
      const updated = await ctx.deps.store.update(
        record,
        validUntil ? { validUntil } : {},
        validUntil ? [] : ['validUntil'],
        { audit: entryOf(change, record) },
      );
      return { ...view(updated), changed: true };
    }),
  );
}

/** `keys set-scope <id> read|all`: a key that may only read, or every operation. */
export async function setScope(ctx: AdminContext, keyId: string, scope: KeyScope): Promise<TermsChange> {
  const change = await changeBy(ctx, `set-scope ${scope}`, () =>
    scope === 'read' ? 'may only read' : 'may call every operation',
  );
  let first: KeyScope | null = null;
  return recordStep(() =>
    ctx.onLatest(keyId, async (record) => {
      if (record.status !== 'active') throw new AdminError(`key ${keyId} is ${record.status}: only active keys change`);
      refuseCheckKeyTerms(record.owner, true);
      if ((record.scope ?? 'all') === scope) return { ...view(record), changed: false };
      if (first === null) first = record.scope ?? 'all';
      else if ((record.scope ?? 'all') !== first) throw await changedMeanwhile(ctx, keyId, 'the scope');
      const updated = await ctx.deps.store.update(
        record,
        scope === 'read' ? { scope } : {},
        scope === 'read' ? [] : ['scope'],
        { audit: entryOf(change, record) },
      );
      return { ...view(updated), changed: true };
    }),
  );
}

/** Another command changed what this one sets while it ran: said with that change, who made it and when. */
async function changedMeanwhile(ctx: AdminContext, keyId: string, what: string): Promise<AdminError> {
  return new AdminError(
    `${what} of ${keyId} was changed by another command while this one ran ` +
      `(${(await lastChange(ctx, keyId)) ?? 'its history could not be read'}): nothing changed here; run this ` +
      'command again if it should still apply',
  );
}

/**
 * The pre-traffic check's keys take every operation and never expire: the check sends them on every deploy, and
 * `keys issue-check-key`, the fix a failed check names, would not see a key that expired.
 */
function refuseCheckKeyTerms(owner: string, setsTerms: boolean): void {
  if (setsTerms && owner.toLowerCase() === CHECK_KEY_OWNER)
    throw new AdminError(
      `keys of owner ${CHECK_KEY_OWNER} (the pre-traffic check's) take no scope or expiry: the check sends them on ` +
        'every deploy',
    );
}
