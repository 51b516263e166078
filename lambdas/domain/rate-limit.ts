/**
 * Rate-limit rules (spec section 8): fixed per-minute and per-day windows per key, the headers every response
 * carries, the 429s and the ban. The counting itself is atomic in storage (the LimitCounters port,
 * lambdas/storage/limit-store.ts); this module decides how much to count at once and what to answer.
 *
 * Why leases (docs/rate-limiting.md has the numbers): one write per request on one item caps a key at what one
 * DynamoDB partition takes (~1,000 write units per second) and makes the cost follow the request rate. So:
 * - keys up to LIMITER.exactPerMinute take one request per write: exact counts, exact X-RateLimit-Remaining;
 * - larger keys take a block (a lease) of the window's budget with one write, sized to about
 *   LIMITER.leaseSeconds of this container's own traffic and never past the window's end, and admit from it
 *   without I/O; the budget is split over limiterShards() items;
 * - what a container already knows (a full window, a spent day, a ban) is answered without I/O until it can change;
 * - 429s are added up per container and recorded at most every LIMITER.rejectionFlushMs per key, so neither an
 *   abusive client nor a fleet makes a write per request.
 * Nothing here is ever written twice: counting writes are sent once (no SDK resend), and a write whose answer is
 * lost counts as used (503 for that request): the service may under-admit by the requests whose answers were lost,
 * never over-admit.
 */
import {
  BAN_POLICY,
  LIMITER,
  banThreshold,
  limiterShards,
  shardLimits,
  type PlanLimits,
} from '../../contract/plans.ts';
import { AppError } from './errors.ts';

export interface Windows {
  readonly nowMs: number;
  readonly nowSec: number;
  /** Start of the current UTC minute, unix seconds. */
  readonly minuteStart: number;
  readonly minuteReset: number;
  /** Start of the current UTC day, unix seconds. */
  readonly dayStart: number;
  readonly dayReset: number;
}

export function windowsAt(nowMs: number): Windows {
  const nowSec = Math.floor(nowMs / 1000);
  const minuteStart = nowSec - (nowSec % 60);
  const dayStart = nowSec - (nowSec % 86_400);
  return { nowMs, nowSec, minuteStart, minuteReset: minuteStart + 60, dayStart, dayReset: dayStart + 86_400 };
}

/** One counting write's request: take up to `want` from shard `shard`'s windows (its own share of the limits). */
export interface TakeRequest {
  readonly subject: string;
  readonly shard: number;
  /** The shard's part of the key's limits. */
  readonly limits: PlanLimits;
  readonly w: Windows;
  readonly want: number;
  /**
   * Tokens of this container's earlier lease on the same shard and day that were never used: returned to the day
   * count, and to the minute count too when the write counts in the same window `giveBackWindow` they came from.
   */
  readonly giveBack: number;
  readonly giveBackWindow?: number;
}

/** What a counting write answers. Counts are the shard's, after the write. */
export type Take =
  | {
      readonly kind: 'granted';
      readonly granted: number;
      readonly minuteStart: number;
      readonly minuteCount: number;
      readonly dayCount: number;
    }
  | {
      readonly kind: 'full';
      readonly reason: 'minute' | 'day';
      readonly minuteStart: number;
      readonly minuteCount: number;
      readonly dayCount: number;
    }
  | { readonly kind: 'banned'; readonly banUntil: number };

export interface Usage {
  readonly minuteCount: number;
  readonly dayCount: number;
  readonly banUntil?: number;
}

/** The counting port: conditional writes on small items, each sent once. */
export interface LimitCounters {
  take(req: TakeRequest): Promise<Take>;
  /** Adds `n` 429s to the key's minute window `minuteStart`; answers the window's total. */
  addRejections(subject: string, minuteStart: number, n: number): Promise<number>;
  /** Bans the key on every shard's day items in `days` (latest first) until `banUntil` (unix seconds). */
  ban(subject: string, limits: PlanLimits, banUntil: number, days: readonly number[]): Promise<void>;
  /** The key's counts now (every shard), for the admin tool. */
  usage(subject: string, limits: PlanLimits, w: Windows): Promise<Usage>;
}

/** What the limiter answers for one request. Remaining counts are exact up to LIMITER.exactPerMinute. */
export type Consumption =
  | {
      readonly allowed: true;
      readonly minuteStart: number;
      readonly minuteRemaining: number;
      readonly dayRemaining: number;
    }
  | { readonly allowed: false; readonly reason: 'minute' | 'day'; readonly reset: number }
  | { readonly allowed: false; readonly reason: 'banned'; readonly banUntil: number };

/**
 * The state a stored shard item is in, and the step a counting write takes next:
 * - `count` in the open window `minuteStart` (windows only move forward: a request stamped in an older minute, after
 *   latency or clock skew, counts against the newest one, never reopens an old one);
 * - `open` the request's own minute (newer than the stored one), counting the request in it;
 * - `shrink` to what is left when less than the block asked for is;
 * - `full` or `banned`.
 */
export interface ShardState {
  readonly ms?: number;
  readonly m?: number;
  readonly d?: number;
  readonly banUntil?: number;
}

export type TakeStep =
  | { readonly kind: 'count'; readonly minuteStart: number; readonly want: number }
  | { readonly kind: 'open'; readonly want: number }
  | Exclude<Take, { kind: 'granted' }>;

export function takeStep(state: ShardState, limits: PlanLimits, w: Windows, want: number): TakeStep {
  if ((state.banUntil ?? 0) > w.nowSec) return { kind: 'banned', banUntil: state.banUntil! };
  const newest = state.ms !== undefined && state.ms >= w.minuteStart;
  const minuteStart = newest ? state.ms! : w.minuteStart;
  const minuteCount = newest ? (state.m ?? 0) : 0;
  const dayCount = state.d ?? 0;
  const room = Math.min(limits.perMinute - minuteCount, limits.perDay - dayCount);
  if (room <= 0) {
    const reason = dayCount >= limits.perDay ? 'day' : 'minute';
    return { kind: 'full', reason, minuteStart, minuteCount, dayCount };
  }
  const n = Math.min(want, room);
  return newest ? { kind: 'count', minuteStart, want: n } : { kind: 'open', want: n };
}

/** The day items a ban starting now is written to, latest first, so a failure part-way never ends it at midnight. */
export function banDays(w: Windows): { banUntil: number; days: number[] } {
  const banUntil = w.nowSec + BAN_POLICY.banSeconds;
  const days: number[] = [];
  for (let day = w.dayStart; day < banUntil; day += 86_400) days.unshift(day);
  return { banUntil, days };
}

/**
 * How many requests one counting write takes: 1 up to LIMITER.exactPerMinute (exact); above, about
 * LIMITER.leaseSeconds of this container's own rate for the key, no more than it can use before the window ends,
 * and at most 1/LIMITER.leasesPerShardWindow of the shard's minute budget (what an idle container can strand).
 */
export function leaseSize(limits: PlanLimits, shard: PlanLimits, ratePerSecond: number, w: Windows): number {
  if (limits.perMinute <= LIMITER.exactPerMinute) return 1;
  const secondsLeft = Math.max(0, (w.minuteReset * 1000 - w.nowMs) / 1000);
  const want = Math.ceil(ratePerSecond * Math.min(LIMITER.leaseSeconds, secondsLeft));
  const cap = Math.max(1, Math.floor(shard.perMinute / LIMITER.leasesPerShardWindow));
  return Math.min(Math.max(1, want), cap);
}

/** A block of one window's budget this container holds. */
interface Lease {
  readonly shard: number;
  readonly minuteStart: number;
  readonly dayStart: number;
  readonly granted: number;
  left: number;
  readonly takenAtMs: number;
  /** The shard's counts right after the take. */
  readonly minuteCount: number;
  readonly dayCount: number;
}

/** What this container knows about one key. */
interface KeyState {
  /** The key's shard count when this state was made (a change of limits starts afresh). */
  readonly shards: number;
  lease?: Lease;
  /** Requests per second this container admitted for the key, measured over its last lease. */
  rate: number;
  /** Shards whose minute window `minuteStart` is full, and whose day `dayStart` is spent. */
  fullMinute?: { minuteStart: number; shards: Set<number> };
  fullDay?: { dayStart: number; shards: Set<number> };
  bannedUntil?: number;
  /** 429s not yet recorded, for window `minuteStart`. */
  rejections?: { minuteStart: number; pending: number; flushedAtMs: number };
}

export interface LimiterOptions {
  /** Which shard a lease is taken from: a random one, so leases spread evenly over a key's shards. */
  readonly pickShard?: (shards: number) => number;
  /** Called when recording 429s towards the ban failed: the request still gets its 429. */
  readonly onBookkeepingFailure?: (err: unknown) => void;
  /** Keys remembered per container (least recently added forgotten first). @default 10,000 */
  readonly maxKeys?: number;
}

export interface Limiter {
  /** Counts one request for `subject`; a 503 (UnavailableError) when storage cannot say. */
  consume(subject: string, limits: PlanLimits, w: Windows): Promise<Consumption>;
  /** True when this container already knows, without I/O, that the request will be refused. */
  refusesLocally(subject: string, limits: PlanLimits, w: Windows): boolean;
}

export function createLimiter(counters: LimitCounters, options: LimiterOptions = {}): Limiter {
  const keys = new Map<string, KeyState>();
  const pick = options.pickShard ?? ((n: number) => Math.floor(Math.random() * n));
  const maxKeys = options.maxKeys ?? 10_000;

  const stateOf = (subject: string, limits: PlanLimits): KeyState => {
    let st = keys.get(subject);
    const shards = limiterShards(limits);
    if (!st || st.shards !== shards) {
      if (keys.size >= maxKeys) keys.delete(keys.keys().next().value!);
      st = { shards, rate: 0 };
      keys.set(subject, st);
    }
    return st;
  };

  const isBanned = (st: KeyState, w: Windows) => (st.bannedUntil ?? 0) > w.nowSec;
  const minuteFull = (st: KeyState, shard: number, w: Windows) =>
    // Known full until just before its reset: from then on, a request may reopen it (clock skew, see below).
    st.fullMinute !== undefined &&
    st.fullMinute.minuteStart >= w.minuteStart &&
    st.fullMinute.shards.has(shard) &&
    w.nowMs < (st.fullMinute.minuteStart + 60) * 1000 - LIMITER.maxSkewMs;
  const dayFull = (st: KeyState, shard: number, w: Windows) =>
    st.fullDay !== undefined && st.fullDay.dayStart === w.dayStart && st.fullDay.shards.has(shard);
  // A lease lasts LIMITER.leaseTtlMs: a container whose traffic dropped hands its tokens back at its next request
  // instead of holding them for the rest of the window (and its header estimate stays fresh).
  const leaseUsable = (l: Lease | undefined, w: Windows): boolean =>
    l !== undefined &&
    l.left > 0 &&
    l.minuteStart >= w.minuteStart &&
    l.dayStart === w.dayStart &&
    w.nowMs - l.takenAtMs < LIMITER.leaseTtlMs;

  function fromLease(l: Lease, limits: PlanLimits): Consumption {
    l.left--;
    const n = limiterShards(limits);
    const shard = shardLimits(limits, l.shard);
    // The shard's remaining, scaled to the key (every shard is assumed as used as this one), plus what this
    // container still holds. Exact for one shard and one request per lease.
    const minuteRemaining = Math.max(0, n * (shard.perMinute - l.minuteCount) + l.left);
    const dayRemaining = Math.max(0, n * (shard.perDay - l.dayCount) + l.left);
    return { allowed: true, minuteStart: l.minuteStart, minuteRemaining, dayRemaining };
  }

  function markFull(st: KeyState, shard: number, t: Extract<Take, { kind: 'full' }>, w: Windows) {
    if (t.reason === 'day') {
      if (st.fullDay?.dayStart !== w.dayStart) st.fullDay = { dayStart: w.dayStart, shards: new Set() };
      st.fullDay.shards.add(shard);
    } else {
      if (st.fullMinute?.minuteStart !== t.minuteStart)
        st.fullMinute = { minuteStart: t.minuteStart, shards: new Set() };
      st.fullMinute.shards.add(shard);
    }
  }

  /** Records a 429 towards the ban: added up here, written at most every LIMITER.rejectionFlushMs. */
  async function reject(st: KeyState, subject: string, limits: PlanLimits, minuteStart: number, w: Windows) {
    if (!st.rejections || st.rejections.minuteStart !== minuteStart)
      st.rejections = { minuteStart, pending: 0, flushedAtMs: -Infinity };
    const r = st.rejections;
    r.pending++;
    if (w.nowMs - r.flushedAtMs < LIMITER.rejectionFlushMs) return;
    const n = r.pending;
    r.pending = 0;
    r.flushedAtMs = w.nowMs;
    try {
      // Sent once: a lost answer may have counted these 429s or not; they are not sent again (a ban errs late).
      const total = await counters.addRejections(subject, minuteStart, n);
      if (total > banThreshold(limits)) {
        const { banUntil, days } = banDays(w);
        await counters.ban(subject, limits, banUntil, days);
        st.bannedUntil = banUntil;
      }
    } catch (err) {
      options.onBookkeepingFailure?.(err);
    }
  }

  const banned = (banUntil: number): Consumption => ({ allowed: false, reason: 'banned', banUntil });

  async function refused(
    st: KeyState,
    subject: string,
    limits: PlanLimits,
    reason: 'minute' | 'day',
    minuteStart: number,
    w: Windows,
  ): Promise<Consumption> {
    if (reason === 'day') return { allowed: false, reason, reset: w.dayReset };
    await reject(st, subject, limits, minuteStart, w);
    return st.bannedUntil !== undefined && st.bannedUntil > w.nowSec
      ? banned(st.bannedUntil)
      : { allowed: false, reason, reset: minuteStart + 60 };
  }

  /** Takes a lease from `shard`, handing back the unused part of the last one; undefined when the shard is full. */
  async function takeFrom(st: KeyState, subject: string, limits: PlanLimits, shard: number, w: Windows) {
    const part = shardLimits(limits, shard);
    const old = st.lease;
    const giveBack = old && old.dayStart === w.dayStart && old.shard === shard ? old.left : 0;
    if (old) {
      // This container's rate, from how fast it used its last lease.
      const used = old.granted - old.left;
      const seconds = Math.max(0.05, (w.nowMs - old.takenAtMs) / 1000);
      st.rate = used / seconds;
    }
    const want = leaseSize(limits, part, st.rate, w);
    // Whatever the answer, the old lease is done: it was handed back, or belongs to another shard or day.
    if (giveBack > 0 || (old && old.shard === shard)) st.lease = undefined;
    const giveBackWindow = giveBack > 0 ? old!.minuteStart : undefined;
    const t = await counters.take({ subject, shard, limits: part, w, want, giveBack, giveBackWindow });
    if (t.kind === 'full' && giveBack > 0 && old!.minuteStart >= w.minuteStart && t.reason === 'minute') {
      // The window is full, partly with this container's own unused tokens (the failed write returned nothing):
      // they are still this container's to admit.
      const kept: Lease = { ...old!, takenAtMs: w.nowMs };
      st.lease = kept;
      return { kind: 'granted' as const, lease: kept };
    }
    if (t.kind === 'banned') st.bannedUntil = t.banUntil;
    else if (t.kind === 'full') markFull(st, shard, t, w);
    else {
      const lease: Lease = {
        shard,
        minuteStart: t.minuteStart,
        dayStart: w.dayStart,
        granted: t.granted,
        left: t.granted,
        takenAtMs: w.nowMs,
        minuteCount: t.minuteCount,
        dayCount: t.dayCount,
      };
      // Requests of one container run one at a time in Lambda; where they overlap (the local server), each
      // request admits from the lease its own write took.
      st.lease = lease;
      return { kind: t.kind, lease };
    }
    return t;
  }

  async function consumeAt(subject: string, limits: PlanLimits, w: Windows, reopen: boolean): Promise<Consumption> {
    const st = stateOf(subject, limits);
    if (isBanned(st, w)) return banned(st.bannedUntil!);
    if (leaseUsable(st.lease, w)) return fromLease(st.lease!, limits);
    const shards = limiterShards(limits);
    let last: Extract<Take, { kind: 'full' }> | undefined;
    // A random shard for each lease, so the shards fill evenly (and a shard's count, scaled, estimates the key's);
    // the last lease's shard when it has tokens to hand back. Then the others: a key is refused only when every
    // shard is.
    const first = st.lease && st.lease.left > 0 && st.lease.dayStart === w.dayStart ? st.lease.shard : pick(shards);
    for (let i = 0; i < shards; i++) {
      const shard = (first + i) % shards;
      if (dayFull(st, shard, w) || minuteFull(st, shard, w)) continue;
      const t = await takeFrom(st, subject, limits, shard, w);
      if (t.kind === 'banned') return banned(t.banUntil);
      if (t.kind === 'granted') return fromLease(t.lease, limits);
      last = t;
    }
    const dayShards = st.fullDay?.dayStart === w.dayStart ? st.fullDay.shards.size : 0;
    if (dayShards >= shards) return { allowed: false, reason: 'day', reset: w.dayReset };
    const minuteStart = last?.minuteStart ?? st.fullMinute?.minuteStart ?? w.minuteStart;
    // A full window in its last LIMITER.maxSkewMs: another container's clock may already be in the next minute, and
    // a client told to wait until the reset may be here by its clock. Count it in the next window (opened early),
    // so a client that honours Retry-After is never refused twice in one window.
    const nextMs = (minuteStart + 60) * 1000;
    if (!reopen && w.nowMs >= nextMs - LIMITER.maxSkewMs) return consumeAt(subject, limits, windowsAt(nextMs), true);
    return refused(st, subject, limits, 'minute', minuteStart, w);
  }

  return {
    consume: (subject, limits, w) => consumeAt(subject, limits, w, false),
    refusesLocally(subject, limits, w) {
      const st = keys.get(subject);
      if (!st) return false;
      if (isBanned(st, w)) return true;
      if (leaseUsable(st.lease, w)) return false;
      const shards = limiterShards(limits);
      for (let s = 0; s < shards; s++) if (!dayFull(st, s, w) && !minuteFull(st, s, w)) return false;
      return true;
    },
  };
}

export interface RateLimitHeaders {
  'X-RateLimit-Limit': string;
  'X-RateLimit-Remaining': string;
  'X-RateLimit-Reset': string;
  'Retry-After'?: string;
}

/** Headers for the window that binds soonest: the one with fewer requests left (the minute on a tie). */
export function headersFor(
  limits: PlanLimits,
  w: Windows,
  c: Extract<Consumption, { allowed: true }>,
): RateLimitHeaders {
  const minuteBinds = c.minuteRemaining <= c.dayRemaining;
  return {
    'X-RateLimit-Limit': String(minuteBinds ? limits.perMinute : limits.perDay),
    'X-RateLimit-Remaining': String(
      minuteBinds ? Math.min(c.minuteRemaining, limits.perMinute) : Math.min(c.dayRemaining, limits.perDay),
    ),
    'X-RateLimit-Reset': String(minuteBinds ? c.minuteStart + 60 : w.dayReset),
  };
}

/** Runs the limiter for one request: headers to send, or an AppError (429) that carries them. */
export async function enforce(
  limiter: Limiter,
  subject: string,
  limits: PlanLimits,
  w: Windows,
): Promise<RateLimitHeaders> {
  const c = await limiter.consume(subject, limits, w);
  if (c.allowed) return headersFor(limits, w, c);
  if (c.reason === 'banned') {
    const retry = Math.max(1, c.banUntil - w.nowSec);
    throw new AppError(
      'key_banned',
      `The API key is banned until ${new Date(c.banUntil * 1000).toISOString()} for repeated requests over its rate limit.`,
      {
        'X-RateLimit-Limit': String(limits.perMinute),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(c.banUntil),
        'Retry-After': String(retry),
      },
    );
  }
  const limit = c.reason === 'minute' ? limits.perMinute : limits.perDay;
  const retry = Math.max(1, c.reset - w.nowSec);
  throw new AppError(
    c.reason === 'minute' ? 'rate_limited' : 'quota_exceeded',
    c.reason === 'minute'
      ? `Rate limit of ${limit} requests per minute exceeded: retry after ${retry} s, with exponential backoff. Requests that keep coming while limited lead to a temporary ban (${BAN_POLICY.banSeconds / 60} minutes).`
      : `Daily quota of ${limit} requests exceeded: retry after ${retry} s, or move to a higher plan.`,
    {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(c.reset),
      'Retry-After': String(retry),
    },
  );
}
