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
import { enforce, windowsAt } from '../domain/rate-limit.ts';
import { createLimiter, type Limiter } from '../domain/limiter.ts';
import { createLimitStore } from '../storage/limit-store.ts';
import { noteStanding, type StandingNote } from '../storage/standing.ts';
import type { Runtime } from './runtime.ts';

/**
 * A function's admission, built once per container by its envelope: the limiter (it keeps the container's leases)
 * and the standings this container already recorded (key hash and what), so each is written once per container.
 */
export interface Gate {
  readonly limiter: Limiter;
  readonly noted: Set<string>;
}

/** The function's gate; none when the limiter is off. */
export function gateOf(rt: Runtime): Gate | undefined {
  if (rt.config.RATE_LIMITER === 'off') return undefined;
  const limiter = createLimiter(createLimitStore(rt.storage, rt.telemetry), {
    banRecheckMs: rt.config.AUTH_CACHE_TTL_SECONDS * 1000,
    onBookkeepingFailure: (err) => {
      rt.telemetry.log.warn('ban bookkeeping failed', { errorName: (err as Error)?.name });
      // The storage outage metric (and its alarm), with its own reason: the client was answered, the ban not kept.
      rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
    },
  });
  return { limiter, noted: new Set() };
}

/**
 * A banned key, or one whose day is spent, reached this function: the gateway did not know (a rotated secret, a
 * standing not yet recorded). Records it where the authorizer reads it, once per container, so the key's next
 * uncached authorization stops it at the gateway. Best effort: the request gets its 429 whatever happens here.
 */
async function tellGateway(
  rt: Runtime,
  noted: Set<string>,
  auth: AuthContext,
  err: AppError,
  dayStart: number,
): Promise<void> {
  if (!auth.keyHash) return;
  let note: StandingNote;
  if (err.code === 'key_banned') note = { bannedUntil: Number(err.headers['X-RateLimit-Reset']) };
  else if (err.code === 'quota_exceeded') note = { spentDay: dayStart };
  else return;
  const id = `${auth.keyHash}|${JSON.stringify(note)}`;
  if (noted.has(id)) return;
  if (noted.size >= 10_000) noted.clear();
  noted.add(id);
  await noteStanding(rt.storage, auth.keyHash, note).catch((e: unknown) => {
    noted.delete(id);
    rt.telemetry.log.warn('standing not recorded', { errorName: (e as Error)?.name });
    rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
  });
}

export interface Admission {
  /** Whether the limiter will refuse without asking storage: then the operation should not start at all. */
  readonly refusedLocally: boolean;
  /** Settles once the call is counted: its headers are in `headers`; rejects with the 429/503. */
  readonly done: Promise<void>;
}

/** Counts the call against its key's windows, adding the X-RateLimit-* headers to `headers` when it settles. */
export function admit(
  rt: Runtime,
  { limiter, noted }: Gate,
  auth: AuthContext,
  headers: Record<string, string>,
): Admission {
  const windows = windowsAt(rt.now());
  const refusedLocally = limiter.refusesLocally(auth.keyId, auth, windows);
  const done = enforce(limiter, auth.keyId, auth, windows).then(
    (h) => void Object.assign(headers, h),
    async (err: unknown) => {
      if (err instanceof AppError && err.status === 429) {
        rt.telemetry.count('RateLimited', { code: err.code }, { plan: auth.plan });
        await tellGateway(rt, noted, auth, err, windows.dayStart);
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
