/**
 * Admission: the rate limiter's step of the envelope. It counts the call against its key's windows and gives the
 * X-RateLimit-* headers, or the 429/503 that carries them.
 *
 * Reads do not wait for it before they start: the envelope starts a read operation's handler beside the limiter's
 * write and answers when both are done (a refused request's read is discarded), so a read costs one DynamoDB round
 * trip of latency, not two. Creates still count before they write. When this container already knows the request
 * is refused (a full window, a spent day, a ban), nothing is started.
 */
import type { AuthContext } from '../domain/keys.ts';
import { AppError, UnavailableError } from '../domain/errors.ts';
import { bannedBy, enforce, windowsAt } from '../domain/rate-limit.ts';
import type { BanCause } from '../../contract/deny-context.ts';
import { MIN_BAN_RECHECK_MS, createLimiter, type Limiter } from '../domain/limiter.ts';
import { createLimitStore } from '../storage/limit-store.ts';
import { noteStanding, type StandingNote } from '../storage/standing.ts';
import type { Runtime } from './runtime.ts';

/** A standing this container recorded: when, and (for a ban) who the item says banned the key until that end. */
interface Noted {
  readonly at: number;
  readonly by: Promise<BanCause | undefined>;
}

/**
 * A function's admission, built once per container by its envelope: the limiter (it keeps the container's leases)
 * and the standings this container recorded (key hash and what → when, and whose ban), so a flood of refusals writes
 * each once.
 */
export interface Gate {
  readonly limiter: Limiter;
  readonly noted: Map<string, Noted>;
  /** How long a recorded standing is trusted to be at the gateway: the authorizer cache TTL (ms), as a ban is. */
  readonly notedForMs: number;
}

/** The function's gate; none when the limiter is off. */
export function gateOf(rt: Runtime): Gate | undefined {
  if (rt.config.RATE_LIMITER === 'off') return undefined;
  // Trusted at least MIN_BAN_RECHECK_MS: with the cache off, what reaches a function past a standing costs no write
  // each.
  const trustMs = Math.max(rt.config.AUTH_CACHE_TTL_SECONDS * 1000, MIN_BAN_RECHECK_MS);
  const limiter = createLimiter(createLimitStore(rt.storage, rt.telemetry), {
    banRecheckMs: trustMs,
    onBookkeepingFailure: (err) => {
      rt.telemetry.log.warn('ban bookkeeping failed', { errorName: (err as Error)?.name });
      // The storage outage metric (and its alarm), with its own reason: the client was answered, the ban not kept.
      rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
    },
  });
  return { limiter, noted: new Map(), notedForMs: trustMs };
}

/**
 * A banned key, or one whose day is spent, reached this function: the gateway did not know (a rotated secret, a
 * standing not yet recorded). Records it where the authorizer reads it, so the key's next uncached authorization
 * stops it at the gateway. Best effort: the request gets its 429 whatever happens here. For a ban, answers who
 * banned the key as its standing records it (storage/standing.ts noteStanding), so an admin's ban is told as one.
 *
 * Once per container per authorizer cache TTL (at least MIN_BAN_RECHECK_MS), not once per container: a standing the
 * gateway holds stops the key there within a TTL (its cached Allow expires), so the same refusal reaching this
 * function a TTL after it was recorded means the gateway no longer holds it: an admin lifted it (`keys unban`
 * forgets a spent day) and the key spent the day again, which must be recorded again, or its refused requests reach
 * the functions all day.
 */
async function tellGateway(
  rt: Runtime,
  { noted, notedForMs }: Pick<Gate, 'noted' | 'notedForMs'>,
  auth: AuthContext,
  err: AppError,
  dayStart: number,
): Promise<BanCause | undefined> {
  if (!auth.keyHash) return undefined;
  let note: StandingNote;
  if (err.code === 'key_banned') note = { bannedUntil: Number(err.headers['X-RateLimit-Reset']) };
  else if (err.code === 'quota_exceeded') note = { spentDay: dayStart };
  else return undefined;
  const id = `${auth.keyHash}|${JSON.stringify(note)}`;
  const now = rt.now();
  const seen = noted.get(id);
  if (seen !== undefined && now - seen.at < notedForMs) return seen.by;
  if (noted.size >= 10_000) noted.clear();
  // The write answers whose ban it is (an admin's was recorded by the admin tool before any function saw it); the
  // refusals that follow within the TTL are worded by that answer without another write.
  const by = noteStanding(rt.storage, auth.keyHash, note).catch((e: unknown) => {
    noted.delete(id);
    rt.telemetry.log.warn('standing not recorded', { errorName: (e as Error)?.name });
    rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
    return undefined;
  });
  noted.set(id, { at: now, by });
  return by;
}

export interface Admission {
  /** Whether the limiter will refuse without asking storage: then the operation should not start at all. */
  readonly refusedLocally: boolean;
  /** Settles once the call is counted: its headers are in `headers`; rejects with the 429/503. */
  readonly done: Promise<void>;
}

/** Counts the call against its key's windows, adding the X-RateLimit-* headers to `headers` when it settles. */
export function admit(rt: Runtime, gate: Gate, auth: AuthContext, headers: Record<string, string>): Admission {
  const windows = windowsAt(rt.now());
  const { limiter } = gate;
  const refusedLocally = limiter.refusesLocally(auth.keyId, auth, windows);
  const done = enforce(limiter, auth.keyId, auth, windows).then(
    (h) => void Object.assign(headers, h),
    async (err: unknown) => {
      if (err instanceof AppError && err.status === 429) {
        rt.telemetry.count('RateLimited', { code: err.code }, { plan: auth.plan });
        const by = await tellGateway(rt, gate, auth, err, windows.dayStart);
        // An admin's ban is told as one; the limiter's counters alone cannot say whose it is.
        if (by) throw bannedBy(err, by);
      }
      // The counters cannot be read: nothing is admitted, so nothing is left until the retry.
      if (err instanceof UnavailableError) {
        Object.assign(headers, {
          'X-RateLimit-Limit': String(auth.perMinute),
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': String(windows.minuteReset),
        });
      }
      throw err;
    },
  );
  // Awaited by the envelope on every path; this only keeps an early failure from being reported as unhandled.
  done.catch(() => undefined);
  return { refusedLocally, done };
}
