/**
 * The TOKEN authorizer: `Authorization: Bearer <key>` → SHA-256 → the key record and its standing, in one
 * BatchGetItem per cache miss. Unknown, revoked or malformed keys throw exactly "Unauthorized" (401); a token failing
 * keyForm costs no read. A storage failure throws another error (AUTHORIZER_FAILURE, our 503): it fails closed.
 * A banned or spent key gets a Deny (ACCESS_DENIED, our 429 key_banned or quota_exceeded; the context carries the
 * code, message and headers) before it reaches a function or its usage plan. A spent key back after its Deny
 * expired is banned (refusal.ts spentRepeat). An allowed key counts against its plan's API key.
 * The policy names the whole stage, so a cached result serves every route; a read-only key's scope rides in the
 * context for the envelope. An expired key is allowed for EXPIRED_NOTICE_SECONDS, so the function answers 401
 * key_expired (nothing counted or read); then it is unknown.
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import {
  hashKey,
  keyForm,
  overlapTarget,
  parseBearer,
  usableKey,
  type Authenticated,
  type Standing,
} from '../domain/keys.ts';
import { banAsLimiter } from '../domain/limiter.ts';
import { windowsAt } from '../domain/rate-limit.ts';
import { denyContextOf, refusalOf, spentRepeat } from '../domain/refusal.ts';
// The key and standing lookup, and the limiter's ban writes: no pet code in the authorizer's bundle.
import { requestPathPorts, type Runtime } from '../shared/runtime.ts';

/** `arn:aws:execute-api:region:account:apiId/stage/METHOD/path` → `arn:aws:execute-api:region:account:apiId/stage/*` */
export function stageWildcard(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

/**
 * What API Gateway reads as 401: a failure whose message is exactly "Unauthorized". The Lambda runtime logs every
 * failure with its stack ("Invoke Error"), once per denied token; this one's stack is its one line, so a flood of
 * forged tokens writes a bounded line each, never a trace of the authorizer's frames.
 */
export function unauthorizedError(): Error {
  const err = new Error('Unauthorized');
  err.stack = 'Error: Unauthorized';
  return err;
}

/**
 * How long a container adds up its counts without a breakdown (denials, old-form keys) before it writes them: one
 * EMF line a minute at most, however many tokens it refuses (a line each cost about $12/h of logs in a 10,000/s
 * forged flood). A minute is the dashboard's period, and no alarm reads these counts, so a total a minute late
 * loses nothing anyone watches; what a container added up after its last line is written at its next invocation a
 * minute on, or lost with the container (at most a minute's count).
 */
export const TALLY_FLUSH_MS = 60_000;

/** Counts added up in the container, written at most every TALLY_FLUSH_MS (the first at once). */
function tally(rt: Runtime) {
  const pending = new Map<string, number>();
  let flushedAt = -Infinity;
  return {
    add(name: string) {
      pending.set(name, (pending.get(name) ?? 0) + 1);
    },
    /** Writes the totals when the last write is TALLY_FLUSH_MS old; called at the end of every invocation. */
    flushIfDue() {
      const now = rt.now();
      if (!pending.size || now - flushedAt < TALLY_FLUSH_MS) return;
      for (const [name, n] of pending) rt.telemetry.add(name, n);
      pending.clear();
      flushedAt = now;
      rt.telemetry.flush();
    },
  };
}

export function authorizerHandler(rt: Runtime) {
  const { count } = rt.telemetry;
  const keysStage = rt.config.USAGE_KEYS_STAGE ?? rt.config.STAGE;
  const ttl = rt.config.AUTH_CACHE_TTL_SECONDS;
  const counts = tally(rt);
  const ports = requestPathPorts(rt);
  const { standings } = ports;
  const unauthorized = () => {
    // Denials apart from failures (the function's Errors count both): an unknown or revoked key, answered 401.
    counts.add('AuthorizerDenied');
    return unauthorizedError();
  };

  /**
   * A spent key denied again: banned when it came back after its Deny expired, else its first Deny of the day
   * noted. Best effort: the request is denied whatever happens here, and the next denial tries again.
   */
  async function spentAgain(auth: Authenticated, keyHash: string, standing: Standing, nowMs: number) {
    const w = windowsAt(nowMs);
    const step = spentRepeat(standing, w.nowSec, ttl);
    try {
      if (step === 'mark') await standings.noteSpentTold(keyHash, w.nowSec, true);
      if (step !== 'ban') return standing;
      const key = { subject: auth.keyId, hash: keyHash, limits: auth };
      // Ends with the day at the latest: the key could not be served before then anyway, so the ban never costs it a
      // request of the next day.
      const bannedUntil = await banAsLimiter(ports, key, w, w.dayStart + 86_400);
      return { ...standing, bannedUntil };
    } catch (err) {
      rt.telemetry.log.warn('spent key not noted', { errorName: (err as Error)?.name });
      rt.telemetry.count('StorageUnavailable', { reason: 'BanBookkeeping' });
      return standing;
    }
  }

  const authorize = async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const key = parseBearer(event.authorizationToken);
    // A token that fails its own check, or is of no shape a key was issued in, is no key: refused before any read
    // (domain/keys.ts keyForm).
    const form = key ? keyForm(key, rt.config.OLD_KEY_FORM) : 'forged';
    if (!key || form === 'forged') throw unauthorized();
    const failed = (err: unknown) => {
      // Fail closed: API Gateway answers AUTHORIZER_FAILURE (mapped to 503), never lets the request through. The
      // alarm watches this metric, not the function's Errors: the `Unauthorized` thrown for unknown keys counts there.
      const e = err as { name?: string; cause?: unknown } | undefined;
      count('AuthorizerFailure', { reason: String(e?.cause ?? e?.name ?? 'Error') });
      throw err;
    };
    let keyHash = hashKey(key);
    let found = await standings.read(keyHash).catch(failed);
    // A secret rotated with an overlap (`keys rotate --overlap`) is accepted until the overlap ends, as the key it was
    // rotated into: that record and its standing decide, and a refusal is recorded on that hash. One hop only: an
    // overlap item leading to another is refused.
    const target = overlapTarget(found.record, Math.floor(rt.now() / 1000));
    if (target) {
      keyHash = target;
      found = await standings.read(target).catch(failed);
    }
    const auth = usableKey(found.record, keysStage);
    if (!auth) throw unauthorized();
    if (form === 'unchecked') {
      // A key of the old form still in use: when this stays 0, the stage can refuse the form (OLD_KEY_FORM).
      counts.add('OldKeyFormAccepted');
    }
    const nowMs = rt.now();
    const nowSec = Math.floor(nowMs / 1000);
    // Why a usable key is refused at the gateway (domain/refusal.ts): expired past its notice (401, no function
    // runs), banned or its day spent (a Deny carrying what the function would answer).
    let standing = found.standing;
    let refused = refusalOf(auth, nowSec, { at: 'gateway', standing, cacheTtlSeconds: ttl });
    if (refused?.code === 'unauthorized') throw unauthorized();
    if (refused?.code === 'quota_exceeded') {
      standing = await spentAgain(auth, keyHash, standing!, nowMs);
      refused = refusalOf(auth, nowSec, { at: 'gateway', standing, cacheTtlSeconds: ttl });
    }
    const deny = refused ? denyContextOf(refused) : {};
    return {
      principalId: auth.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: refused ? 'Deny' : 'Allow',
            Resource: stageWildcard(event.methodArn),
          },
        ],
      },
      context: {
        keyId: auth.keyId,
        plan: auth.plan,
        perMinute: auth.perMinute,
        perDay: auth.perDay,
        keyHash,
        // What the envelope refuses before its limiter: a read-only key's changes, an expired key (0: never expires).
        scope: auth.scope,
        validUntil: auth.validUntil,
        ...deny,
      },
      // Its plan's API key: API Gateway counts the request against that plan's usage plan.
      usageIdentifierKey: auth.usageIdentifierKey,
    };
  };

  return async (event: APIGatewayTokenAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> => {
    rt.telemetry.begin(context);
    try {
      return await authorize(event);
    } finally {
      // After this invocation's own count: a denial after a quiet minute is written at once.
      counts.flushIfDue();
    }
  };
}
