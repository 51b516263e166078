/**
 * One container's limiter over the counting port: the leases it holds, what it already knows (a full window, a
 * spent day, a ban) so it answers those without I/O, and the 429s it has not recorded yet. The rules it applies are
 * in rate-limit.ts; what a refusal answers is refusal.ts.
 */
import { LIMITER, banThreshold, limiterShards, shardLimits, type PlanLimits } from '../../contract/plans.ts';
import type { StandingStore } from './keys.ts';
import {
  banDays,
  leaseCap,
  leaseSize,
  settleTake,
  windowsAt,
  type Consumption,
  type LimitCounters,
  type Take,
  type Windows,
} from './rate-limit.ts';

/** What the envelope asks of a container's limiter (createLimiter builds it). */
export interface Limiter {
  /** Counts one request for `subject`; a 503 (UnavailableError) when storage cannot say. */
  consume(subject: string, limits: PlanLimits, w: Windows): Promise<Consumption>;
  /** True when this container already knows, without I/O, that the request will be refused. */
  refusesLocally(subject: string, limits: PlanLimits, w: Windows): boolean;
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
  /** The key's limits when this state was made: a plan change starts afresh (no stale full window or lease). */
  readonly perMinute: number;
  readonly perDay: number;
  lease?: Lease;
  /** Requests per second this container admitted for the key, measured over its last lease. */
  rate: number;
  /** Shards whose minute window `minuteStart` is full, and whose day `dayStart` is spent (learnt at `seenMs`). */
  fullMinute?: { minuteStart: number; shards: Set<number> };
  fullDay?: { dayStart: number; shards: Set<number>; seenMs: number };
  bannedUntil?: number;
  bannedSeenMs?: number; // when this container learnt of the ban (trusted for banRecheckMs)
  /** 429s not yet recorded, for window `minuteStart`. */
  rejections?: { minuteStart: number; pending: number; flushedAtMs: number };
  /**
   * The counting write of a leased key in flight from this container, and how many requests wait for it. One at a
   * time: overlapping takes would each replace the lease the other just took and strand its tokens (counted,
   * never admitted), and the waiting requests tell the next take how much to ask for.
   */
  taking?: Promise<unknown>;
  waiting: number;
}

/** How long a container trusts a ban before asking storage again unless told (the stack's authorizer TTL). */
export const BAN_RECHECK_MS = 60_000;

/**
 * The least a container trusts a ban or spent day it learnt, whatever the authorizer cache TTL. With a TTL of 0 the
 * gateway reads the key's standing on every request, so only requests already past it reach a function; trusting
 * it a second (the limiter's own bookkeeping cadence, LIMITER.rejectionFlushMs) costs those no write each, and
 * `keys unban` is served within that second.
 */
export const MIN_BAN_RECHECK_MS = 1_000;

export interface LimiterOptions {
  /** Which shard a lease is taken from: a random one, so leases spread evenly over a key's shards. */
  readonly pickShard?: (shards: number) => number;
  /** Called when recording 429s towards the ban failed: the request still gets its 429. */
  readonly onBookkeepingFailure?: (err: unknown) => void;
  /** Keys remembered per container (least recently added forgotten first). @default 10,000 */
  readonly maxKeys?: number;
  /**
   * How long a ban learnt is trusted (`keys unban` lifts it): the authorizer cache TTL, at least MIN_BAN_RECHECK_MS.
   * @default BAN_RECHECK_MS
   */
  readonly banRecheckMs?: number;
}

export function createLimiter(counters: LimitCounters, options: LimiterOptions = {}): Limiter {
  const keys = new Map<string, KeyState>();
  const pick = options.pickShard ?? ((n: number) => Math.floor(Math.random() * n));
  const { maxKeys = 10_000 } = options;
  const banRecheckMs = Math.max(options.banRecheckMs ?? BAN_RECHECK_MS, MIN_BAN_RECHECK_MS);

  const stateOf = (subject: string, limits: PlanLimits): KeyState => {
    let st = keys.get(subject);
    if (!st || st.perMinute !== limits.perMinute || st.perDay !== limits.perDay) {
      if (keys.size >= maxKeys) keys.delete(keys.keys().next().value!);
      st = { perMinute: limits.perMinute, perDay: limits.perDay, rate: 0, waiting: 0 };
      keys.set(subject, st);
    }
    return st;
  };

  const isBanned = (st: KeyState, w: Windows) =>
    (st.bannedUntil ?? 0) > w.nowSec && w.nowMs - (st.bannedSeenMs ?? -Infinity) < banRecheckMs;
  const minuteFull = (st: KeyState, shard: number, w: Windows) =>
    // Known full until just before its reset: from then on, a request may reopen it (clock skew, see below).
    st.fullMinute !== undefined &&
    st.fullMinute.minuteStart >= w.minuteStart &&
    st.fullMinute.shards.has(shard) &&
    w.nowMs < (st.fullMinute.minuteStart + 60) * 1000 - LIMITER.maxSkewMs;
  // A spent day is asked again as often as a ban (an admin may lift either: `keys unban`).
  const dayFull = (st: KeyState, shard: number, w: Windows) =>
    st.fullDay?.dayStart === w.dayStart && st.fullDay.shards.has(shard) && w.nowMs - st.fullDay.seenMs < banRecheckMs;
  // A lease lasts LIMITER.leaseTtlMs: a container whose traffic dropped hands its tokens back at its next request
  // instead of holding them for the rest of the window (and its header estimate stays fresh).
  const leaseUsable = (l: Lease | undefined, w: Windows): boolean =>
    l !== undefined &&
    l.left > 0 &&
    l.minuteStart >= w.minuteStart &&
    l.dayStart === w.dayStart &&
    w.nowMs - l.takenAtMs < LIMITER.leaseTtlMs;

  /** Admits one request from `l`, which must have a token left (checked synchronously by every caller). */
  function fromLease(l: Lease, limits: PlanLimits): Extract<Consumption, { allowed: true }> {
    if (l.left <= 0) throw new Error('a lease with no token left');
    l.left--;
    const n = limiterShards(limits);
    const shard = shardLimits(limits, l.shard);
    // The shard's remaining, scaled to the key (every shard is assumed as used as this one), plus what this
    // container still holds. Exact for one shard and one request per lease.
    const minuteRemaining = Math.max(0, n * (shard.perMinute - l.minuteCount) + l.left);
    const dayRemaining = Math.max(0, n * (shard.perDay - l.dayCount) + l.left);
    return { allowed: true, minuteStart: l.minuteStart, dayReset: l.dayStart + 86_400, minuteRemaining, dayRemaining };
  }

  function markFull(st: KeyState, shard: number, t: Extract<Take, { kind: 'full' }>, w: Windows) {
    if (t.reason === 'day') {
      if (st.fullDay?.dayStart !== w.dayStart) st.fullDay = { dayStart: w.dayStart, shards: new Set(), seenMs: 0 };
      Object.assign(st.fullDay, { seenMs: w.nowMs }).shards.add(shard);
    } else {
      if (st.fullMinute?.minuteStart !== t.minuteStart)
        st.fullMinute = { minuteStart: t.minuteStart, shards: new Set() };
      st.fullMinute.shards.add(shard);
    }
  }

  /**
   * Records a 429 towards the ban: added up here, written at most every LIMITER.rejectionFlushMs. Answers the end of
   * the ban it decided, if it did.
   */
  async function reject(
    st: KeyState,
    subject: string,
    limits: PlanLimits,
    minuteStart: number,
    w: Windows,
  ): Promise<number | undefined> {
    if (!st.rejections || st.rejections.minuteStart !== minuteStart)
      st.rejections = { minuteStart, pending: 0, flushedAtMs: -Infinity };
    const r = st.rejections;
    r.pending++;
    if (w.nowMs - r.flushedAtMs < LIMITER.rejectionFlushMs) return undefined;
    const n = r.pending;
    r.pending = 0;
    r.flushedAtMs = w.nowMs;
    try {
      // Sent once: a lost answer may have counted these 429s or not; they are not sent again (a ban errs late).
      const total = await counters.addRejections(subject, minuteStart, n);
      if (total > banThreshold(limits)) {
        // Counted before it is written: a failure between the two errs towards a longer next ban, never a shorter.
        const nth = await counters.countBan(subject, w.dayStart, minuteStart);
        const { banUntil, days } = banDays(w, nth);
        await counters.ban(subject, limits, banUntil, days);
        st.bannedUntil = banUntil;
        st.bannedSeenMs = w.nowMs;
        return banUntil;
      }
    } catch (err) {
      options.onBookkeepingFailure?.(err);
    }
    return undefined;
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
    // Every 429 counts towards the ban, a spent day's included: a key that keeps sending after its quota is spent
    // would otherwise flood what it shares (a Free key's pool slot) all day long without ever being stopped.
    // The request whose 429 decided the ban is told so, however briefly bans are trusted: its key_banned is what
    // records the ban where the authorizer reads it (shared/admission.ts).
    const decided = await reject(st, subject, limits, minuteStart, w);
    if (decided !== undefined) return banned(decided);
    if (isBanned(st, w)) return banned(st.bannedUntil!);
    return { allowed: false, reason, reset: reason === 'day' ? w.dayReset : minuteStart + 60 };
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
    // At least one token for each request of this container waiting for this take.
    const want = Math.max(leaseSize(limits, part, st.rate, w), Math.min(st.waiting + 1, leaseCap(part)));
    // Whatever the answer, the old lease is done: it was handed back, or belongs to another shard or day.
    if (giveBack > 0 || (old && old.shard === shard)) st.lease = undefined;
    const giveBackWindow = giveBack > 0 ? old!.minuteStart : undefined;
    const t = await settleTake(counters, { subject, shard, limits: part, w, want, giveBack, giveBackWindow });
    if (t.kind === 'full' && giveBack > 0 && old!.minuteStart >= w.minuteStart && t.reason === 'minute') {
      // The window is full, partly with this container's own unused tokens (the failed write returned nothing):
      // they are still this container's to admit.
      const kept: Lease = { ...old!, takenAtMs: w.nowMs };
      const admitted = fromLease(kept, limits);
      st.lease = kept;
      return { kind: 'granted' as const, admitted };
    }
    if (t.kind === 'banned') Object.assign(st, { bannedUntil: t.banUntil, bannedSeenMs: w.nowMs });
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
      // This request's token is taken before the lease is shared (in the same synchronous step): where requests of
      // one container overlap (the local server; Lambda runs them one at a time), another request may use only what
      // is left of it.
      const admitted = fromLease(lease, limits);
      st.lease = lease;
      return { kind: t.kind, admitted };
    }
    return t;
  }

  /** What one pass over a key's shards found: an answer, or that the window must be reopened early. */
  type Outcome =
    | { readonly kind: 'answer'; readonly c: Consumption }
    | { readonly kind: 'refused'; readonly reason: 'minute' | 'day'; readonly minuteStart: number }
    | { readonly kind: 'reopen'; readonly nextMs: number };

  async function takeAny(st: KeyState, subject: string, limits: PlanLimits, w: Windows): Promise<Outcome> {
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
      if (t.kind === 'banned') return { kind: 'answer', c: banned(t.banUntil) };
      if (t.kind === 'granted') return { kind: 'answer', c: t.admitted };
      last = t;
    }
    const dayShards = st.fullDay?.dayStart === w.dayStart ? st.fullDay.shards.size : 0;
    if (dayShards >= shards) return { kind: 'refused', reason: 'day', minuteStart: w.minuteStart };
    const minuteStart = last?.minuteStart ?? st.fullMinute?.minuteStart ?? w.minuteStart;
    // A full window in its last LIMITER.maxSkewMs: another container's clock may already be in the next minute, and
    // a client told to wait until the reset may be here by its clock. Count it in the next window (opened early),
    // so a client that honours Retry-After is never refused twice in one window.
    const nextMs = (minuteStart + 60) * 1000;
    if (w.nowMs >= nextMs - LIMITER.maxSkewMs) return { kind: 'reopen', nextMs };
    return { kind: 'refused', reason: 'minute', minuteStart };
  }

  /** takeAny, one at a time per leased key: the others wait for it and admit from the lease it took. */
  function takeAlone(st: KeyState, subject: string, limits: PlanLimits, w: Windows): Promise<Outcome> {
    if (limits.perMinute <= LIMITER.exactPerMinute) return takeAny(st, subject, limits, w);
    const run = (async () => {
      try {
        return await takeAny(st, subject, limits, w);
      } finally {
        st.taking = undefined;
      }
    })();
    st.taking = run;
    return run;
  }

  async function consumeAt(subject: string, limits: PlanLimits, w: Windows, reopen: boolean): Promise<Consumption> {
    const st = stateOf(subject, limits);
    if ((st.bannedUntil ?? 0) > w.nowSec && !isBanned(st, w)) {
      // A ban due for its recheck: storage says whether it stands (`keys unban`). Not the full windows this
      // container learnt meanwhile, whose 429s would decide the same ban again, a little longer each time.
      st.bannedUntil = st.fullMinute = st.fullDay = undefined;
    }
    for (;;) {
      if (isBanned(st, w)) return banned(st.bannedUntil!);
      if (leaseUsable(st.lease, w)) return fromLease(st.lease!, limits);
      if (!st.taking) break;
      // A take is in flight: its lease is this request's too. When it fails (503), so does this request: storage
      // could not say just now, and a queue of takes behind an outage would only add to it.
      st.waiting++;
      try {
        await st.taking;
      } finally {
        st.waiting--;
      }
    }
    const o = await takeAlone(st, subject, limits, w);
    if (o.kind === 'answer') return o.c;
    if (o.kind === 'reopen' && !reopen) return consumeAt(subject, limits, windowsAt(o.nextMs), true);
    const minuteStart = o.kind === 'refused' ? o.minuteStart : o.nextMs / 1000 - 60;
    return refused(st, subject, limits, o.kind === 'refused' ? o.reason : 'minute', minuteStart, w);
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

/**
 * Bans a key as the limiter would, where no limiter runs: the authorizer's ban of a spent key that keeps sending
 * (refusal.ts spentRepeat; its requests never reach a function). Written as the limiter writes its own, so it lasts,
 * escalates, shows in `keys show` and `keys unban` lifts it: counted as the key's nth ban of the UTC day, on every
 * shard's day items (what the functions refuse on) and on the key's standing (what the authorizer denies on). The
 * key is noted as told its spent day until the ban's end before the ban is written: stopped between the two, it is
 * denied as spent, then banned when it comes back. Ends no later than `notAfter` (unix seconds); answers the end.
 */
export async function banAsLimiter(
  ports: { readonly counters: LimitCounters; readonly standings: StandingStore },
  key: { readonly subject: string; readonly hash: string; readonly limits: PlanLimits },
  w: Windows,
  notAfter = Infinity,
): Promise<number> {
  const { counters, standings } = ports;
  // Counted before it is written, as the limiter does: a failure between the two errs towards a longer next ban.
  const nth = await counters.countBan(key.subject, w.dayStart, w.minuteStart);
  const full = banDays(w, nth);
  const banUntil = Math.min(full.banUntil, notAfter);
  const days = full.days.filter((day) => day < banUntil);
  await standings.noteSpentTold(key.hash, banUntil, false);
  await Promise.all([
    counters.ban(key.subject, key.limits, banUntil, days),
    standings.note(key.hash, { bannedUntil: banUntil }),
  ]);
  return banUntil;
}
