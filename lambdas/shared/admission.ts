/**
 * Admission: the limiter's step of the envelope. It counts the call against its key's windows and gives the
 * X-RateLimit-* headers, or the 429/503 that carries them (domain/refusal.ts words them).
 *
 * A read's handler starts beside the count and its answer is dropped if the count refuses, so a read costs one
 * DynamoDB round trip, not two; a write counts first. A refusal this container already knows starts nothing.
 */
import type { BanCause } from '../../contract/deny-context.ts';
import { UnavailableError, type AppError } from '../domain/errors.ts';
import type { AuthContext, StandingNote, StandingStore } from '../domain/keys.ts';
import { MIN_BAN_RECHECK_MS, createLimiter, type Limiter } from '../domain/limiter.ts';
import { rateLimitHeaders, windowsAt, type Counted, type LimitCounters } from '../domain/rate-limit.ts';
import { refusalOf } from '../domain/refusal.ts';
import type { Runtime } from './runtime.ts';

/** A standing this container recorded: when, and (for a ban) who the item says banned the key until that end. */
interface Noted {
  readonly at: number;
  readonly by: Promise<BanCause | undefined>;
}

/**
 * What a function's admission keeps per container, built once by its envelope: the limiter (its leases and what it
 * knows) and the standings this container recorded (key hash and what → when, and whose ban), so a flood of
 * refusals writes each once.
 */
export interface AdmissionState {
  readonly limiter: Limiter;
  readonly standings: StandingStore;
  readonly noted: Map<string, Noted>;
  /** How long a recorded standing is trusted to be at the gateway: the authorizer cache TTL (ms), as a ban is. */
  readonly notedForMs: number;
}

/** The function's admission state over the request path's ports; none when the limiter is off. */
export function admissionStateOf(
  rt: Runtime,
  ports: { readonly counters: LimitCounters; readonly standings: StandingStore },
): AdmissionState | undefined {
  if (rt.config.RATE_LIMITER === 'off') return undefined;
  // Trusted at least MIN_BAN_RECHECK_MS, so with the cache off what reaches a function past a standing costs no write.
  const trustMs = Math.max(rt.config.AUTH_CACHE_TTL_SECONDS * 1000, MIN_BAN_RECHECK_MS);
  const limiter = createLimiter(ports.counters, {
    banRecheckMs: trustMs,
    onBookkeepingFailure: (err) => {
      rt.telemetry.log.warn('ban bookkeeping failed', { errorName: (err as Error)?.name });
      // The storage outage metric (and its alarm), with its own reason: the client was answered, the ban not kept.
      rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
    },
  });
  return { limiter, standings: ports.standings, noted: new Map(), notedForMs: trustMs };
}

/**
 * A banned or spent key reached this function, so the gateway did not know (a rotated secret, a standing not yet
 * recorded): records it where the authorizer reads it. Best effort: the request gets its 429 anyway. For a ban,
 * answers who banned the key as its standing records it, so an admin's ban is told as one.
 *
 * Once per authorizer cache TTL, not once per container: the same refusal arriving a TTL later means the gateway no
 * longer holds it (an admin lifted it and the key was refused again), so it must be recorded again.
 */
async function tellGateway(
  rt: Runtime,
  { standings, noted, notedForMs }: Pick<AdmissionState, 'standings' | 'noted' | 'notedForMs'>,
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
  // The write answers whose ban it is; the refusals that follow within the TTL are worded by it without a write.
  const by = standings.note(auth.keyHash, note).catch((e: unknown) => {
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
  /** Settles with the count, this call's included, once its headers are in `headers`; rejects with the 429/503. */
  readonly done: Promise<Counted>;
}

/** Counts the call against its key's windows, adding the X-RateLimit-* headers to `headers` when it settles. */
export function admit(
  rt: Runtime,
  state: AdmissionState,
  auth: AuthContext,
  headers: Record<string, string>,
): Admission {
  const windows = windowsAt(rt.now());
  const { limiter } = state;
  const refusedLocally = limiter.refusesLocally(auth.keyId, auth, windows);
  const done = limiter.consume(auth.keyId, auth, windows).then(
    async (counted) => {
      if (counted.allowed) {
        Object.assign(headers, rateLimitHeaders(auth, counted));
        return counted;
      }
      const refused = refusalOf(auth, windows.nowSec, { at: 'count', counted })!;
      rt.telemetry.count('RateLimited', { code: refused.code }, { plan: auth.plan });
      const by = await tellGateway(rt, state, auth, refused, windows.dayStart);
      // The counters hold only a ban's end; the standing says whose it is, so an admin's ban is told as one.
      throw by ? refusalOf(auth, windows.nowSec, { at: 'count', counted, bannedBy: by })! : refused;
    },
    (err: unknown) => {
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
