/**
 * Atomic rate-limit counting in DynamoDB. One item per subject per UTC day (`rl#<subject>#<dayStart>`) holds the
 * state of lambdas/domain/rate-limit.ts (LimiterState), which also decides every next step. Items are keyed by
 * their window, so TTL (`expiresAt`) is housekeeping only.
 *
 * DynamoDB requests per checked call: 1 on the common path (a conditional UpdateItem), 2 on the first request of a
 * minute (the update that opens the new minute), 1 on a rejection within a second of the window's first 429, 2 on a
 * later one (recording it towards the ban), plus the ban writes when it bans.
 * With N parallel requests on a fresh window exactly `perMinute` pass: every count is a conditional ADD.
 *
 * Retries: the SDK resends a request whose answer was lost (a timeout, a reset connection), and the first copy may
 * have been applied. Each call carries a random token, added to a token set in the same conditional update that
 * counts it; a resent copy finds its token, fails its condition, and the returned item (ALL_OLD) shows the count
 * was made, so one request is counted once. The tokens rotate through TOKEN_SETS sets by one-second slot (`t0`,
 * `t1`, ...; each write clears the set that comes next), so a token is kept at least 9 s, longer than the SDK's
 * resends of one call can run within a request's deadline, and the item holds only the last ~10 s of tokens (about
 * 170 at a Business key's full rate, ~1.4 KB).
 */
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits } from '../../contract/plans.ts';
import {
  banDays,
  limiterStep,
  rejectionStep,
  shouldBan,
  type Consumption,
  type LimiterState,
  type LimitStore,
  type Windows,
} from '../domain/rate-limit.ts';
import { UnavailableError } from '../domain/errors.ts';
import type { Telemetry } from '../shared/observability.ts';
import { conditionFailedItem, guarded, on, type Storage } from './client.ts';

const KEEP_SECONDS = 2 * 86_400;
/** Attempts before giving up on a window that keeps moving under this request (then 503, never a guess). */
const SETTLE_ATTEMPTS = 6;
const TOKEN_SLOT_MS = 1_000;
const TOKEN_SETS = 11;
const key = (subject: string, dayStart: number) => ({ pk: `rl#${subject}#${dayStart}` });

type Item = LimiterState & Partial<Record<`t${number}`, Set<string>>>;
type UpdateInput = Omit<
  ConstructorParameters<typeof UpdateCommand>[0],
  'TableName' | 'ReturnValuesOnConditionCheckFailure'
>;

async function conditionalUpdate(
  { doc, tables }: Storage,
  input: UpdateInput,
): Promise<{ ok: true; item: Item } | { ok: false; old: Item }> {
  try {
    const out = await guarded((options) =>
      doc.send(
        new UpdateCommand({ ...input, TableName: tables.state, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
        options,
      ),
    );
    return { ok: true, item: (out.Attributes ?? {}) as Item };
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException)
      return { ok: false, old: (conditionFailedItem(err) ?? {}) as Item };
    throw err;
  }
}

/** This call's token and the token-set attributes of its 10-second slot. */
function tokenOf(w: Windows) {
  const slot = Math.floor(w.nowMs / TOKEN_SLOT_MS);
  const current = `t${slot % TOKEN_SETS}` as const;
  return {
    token: randomBytes(6).toString('base64url'),
    current,
    names: { '#tk': current, '#tkNext': `t${(slot + 1) % TOKEN_SETS}` },
  };
}

/** Records a rejected request towards the ban (lambdas/domain/rate-limit.ts says when it counts) and bans. */
async function recordRejection(
  storage: Storage,
  subject: string,
  limits: PlanLimits,
  w: Windows,
  state: Item,
): Promise<void> {
  const Key = key(subject, w.dayStart);
  let old = state;
  for (let attempt = 0; attempt < 3; attempt++) {
    const step = rejectionStep(old, w);
    if (step.kind === 'none') return;
    const out =
      step.kind === 'open'
        ? await conditionalUpdate(storage, {
            Key,
            // Forward only: a late request never moves the rejection window back.
            UpdateExpression: 'SET rjm = :ms, rf = :now, rj = :zero',
            ConditionExpression: 'attribute_not_exists(rjm) OR rjm < :ms',
            ExpressionAttributeValues: { ':ms': w.minuteStart, ':now': w.nowMs, ':zero': 0 },
          })
        : await conditionalUpdate(storage, {
            Key,
            UpdateExpression: 'ADD rj :one',
            ConditionExpression: 'rjm = :ms',
            ExpressionAttributeValues: { ':one': 1, ':ms': step.minuteStart },
            ReturnValues: 'UPDATED_NEW',
          });
    if (out.ok) {
      if (step.kind === 'late' && shouldBan(out.item.rj ?? 0, limits)) await ban(storage, subject, w);
      return;
    }
    old = out.old; // the rejection window moved meanwhile: decide again on what is stored now
  }
}

async function ban(storage: Storage, subject: string, w: Windows): Promise<void> {
  const { banUntil, days } = banDays(w);
  for (const day of days) {
    await conditionalUpdate(storage, {
      Key: key(subject, day),
      UpdateExpression: 'SET banUntil = :b, expiresAt = if_not_exists(expiresAt, :exp)',
      // Never shortens a ban already written (a concurrent late rejection, or this one's earlier attempt).
      ConditionExpression: 'attribute_not_exists(banUntil) OR banUntil < :b',
      ExpressionAttributeValues: { ':b': banUntil, ':exp': day + KEEP_SECONDS },
    });
  }
}

/** Rejections answer 429 whatever happens to the ban bookkeeping: a failure there is logged, not the client's. */
async function rejected(
  storage: Storage,
  telemetry: Telemetry,
  subject: string,
  limits: PlanLimits,
  w: Windows,
  old: Item,
  answer: Consumption,
): Promise<Consumption> {
  try {
    await recordRejection(storage, subject, limits, w, old);
  } catch (err) {
    telemetry.log.warn('ban bookkeeping failed', { errorName: (err as Error)?.name });
    // The storage outage metric (and its alarm), with its own reason: the client was answered, the ban was not kept.
    telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
  }
  return answer;
}

/** One limiter call: its key, its token, and the expression parts every attempt of it shares. */
interface Call {
  readonly storage: Storage;
  readonly subject: string;
  readonly limits: PlanLimits;
  readonly w: Windows;
  readonly Key: { pk: string };
  readonly token: string;
  readonly current: `t${number}`;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

const GUARDS = `(attribute_not_exists(banUntil) OR banUntil <= :now) AND NOT contains(#tk, :tok)`;

function callOf(storage: Storage, subject: string, limits: PlanLimits, w: Windows): Call {
  const { token, current, names } = tokenOf(w);
  const values = { ':one': 1, ':dlim': limits.perDay, ':now': w.nowSec, ':tok': token, ':tokset': new Set([token]) };
  return { storage, subject, limits, w, Key: key(subject, w.dayStart), token, current, names, values };
}

/** Common path: the minute (starting `minuteStart`) is open; counts in both windows if both have room. */
function countInOpenMinute(c: Call, minuteStart: number) {
  return conditionalUpdate(c.storage, {
    Key: c.Key,
    UpdateExpression: 'ADD m :one, d :one, #tk :tokset REMOVE #tkNext',
    ConditionExpression: `ms = :ms AND m < :mlim AND d < :dlim AND ${GUARDS}`,
    ExpressionAttributeNames: c.names,
    ExpressionAttributeValues: { ...c.values, ':ms': minuteStart, ':mlim': c.limits.perMinute },
    ReturnValues: 'UPDATED_NEW',
  });
}

/**
 * First request of this minute (or of the day): opens the minute with this request counted. Windows only move
 * forward: `ms < :ms`, never `<>`, so a late request cannot reset a newer minute.
 */
function openMinute(c: Call) {
  return conditionalUpdate(c.storage, {
    Key: c.Key,
    UpdateExpression:
      'SET ms = :ms, m = :one, expiresAt = if_not_exists(expiresAt, :exp) ADD d :one, #tk :tokset REMOVE #tkNext',
    ConditionExpression: `(attribute_not_exists(ms) OR ms < :ms) AND (attribute_not_exists(d) OR d < :dlim) AND ${GUARDS}`,
    ExpressionAttributeNames: c.names,
    ExpressionAttributeValues: { ...c.values, ':ms': c.w.minuteStart, ':exp': c.w.dayStart + KEEP_SECONDS },
    ReturnValues: 'UPDATED_NEW',
  });
}

async function consume(
  storage: Storage,
  telemetry: Telemetry,
  subject: string,
  limits: PlanLimits,
  w: Windows,
): Promise<Consumption> {
  const c = callOf(storage, subject, limits, w);
  // Our own earlier attempt was applied (its answer was lost and the SDK resent it): that count is ours.
  const ours = (old: Item): Consumption | undefined =>
    old[c.current]?.has(c.token) ? { allowed: true, minuteCount: old.m ?? 0, dayCount: old.d ?? 0 } : undefined;
  let minuteStart = w.minuteStart;
  for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
    const counted = await countInOpenMinute(c, minuteStart);
    if (counted.ok) return { allowed: true, minuteCount: counted.item.m ?? 0, dayCount: counted.item.d ?? 0 };
    let old = counted.old;
    for (let step = 0; step < SETTLE_ATTEMPTS; step++) {
      const done = ours(old);
      if (done) return done;
      const next = limiterStep(old, limits, w);
      if (!('kind' in next))
        return next.reason === 'banned' ? next : rejected(storage, telemetry, subject, limits, w, old, next);
      if (next.kind === 'count') {
        minuteStart = next.minuteStart;
        break;
      }
      const opened = await openMinute(c);
      if (opened.ok) return { allowed: true, minuteCount: 1, dayCount: opened.item.d ?? 1 };
      old = opened.old;
    }
  }
  // The windows kept moving under this request (extreme contention): unsure, so 503 + Retry-After, not 500.
  throw new UnavailableError('LimiterContention');
}

async function usage({ doc, tables }: Storage, subject: string, w: Windows) {
  const out = await guarded((options) =>
    doc.send(new GetCommand({ TableName: tables.state, Key: key(subject, w.dayStart), ConsistentRead: true }), options),
  );
  const item = (out.Item ?? {}) as Item;
  return {
    minuteCount: item.ms !== undefined && item.ms >= w.minuteStart ? (item.m ?? 0) : 0,
    dayCount: item.d ?? 0,
    ...(item.banUntil && item.banUntil > w.nowSec ? { banUntil: item.banUntil } : {}),
  };
}

/** The limiter's store; its rare failures to keep a ban are logged and counted through `telemetry`. */
export function createLimitStore(storage: Storage, telemetry: Telemetry): LimitStore {
  return {
    consume: (subject, limits, w) => consume(storage, telemetry, subject, limits, w),
    usage: on(storage, usage),
  };
}
