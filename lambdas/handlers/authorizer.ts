/**
 * The TOKEN authorizer: `Authorization: Bearer <key>` → SHA-256 → the key record and the key's standing, in one
 * BatchGetItem (one round trip per cache miss). Unknown, revoked or malformed keys throw exactly "Unauthorized" (API
 * Gateway answers 401); a token that fails the key's own check (domain/keys.ts keyForm) does so without a read. A
 * storage failure throws another error, which API Gateway answers with AUTHORIZER_FAILURE (mapped to 503): it fails
 * closed, never letting a request through. A banned key is denied (429 key_banned; the Deny's context says when it is
 * served again, for the gateway response to map), a key whose day is spent is counted against the spent-keys usage
 * plan (429 quota_exceeded), both before they count against anything they share. The policy allows the whole API
 * stage, so a cached result works on every route.
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import {
  denyContext,
  gateDecision,
  hashKey,
  keyForm,
  overlapTarget,
  parseBearer,
  quotaContext,
  usableKey,
} from '../domain/keys.ts';
// The key and standing lookup alone, so the authorizer bundle carries no pet or limiter code.
import { readKeyAndStanding } from '../storage/standing.ts';
import { probationUsageKey } from '../storage/bracket-probation.ts';
import type { Runtime } from '../shared/runtime.ts';

/** `arn:aws:execute-api:region:account:apiId/stage/METHOD/path` → `arn:aws:execute-api:region:account:apiId/stage/*` */
export function stageWildcard(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

/**
 * What API Gateway reads as 401: a failure whose message is exactly "Unauthorized". The Lambda runtime logs every
 * failure with its stack ("Invoke Error"), once per denied token; this one's stack is its one line, so a flood of
 * forged tokens writes a bounded line each (and the denial's metric), never a trace of the authorizer's frames.
 */
export function unauthorizedError(): Error {
  const err = new Error('Unauthorized');
  err.stack = 'Error: Unauthorized';
  return err;
}

export function authorizerHandler(rt: Runtime) {
  const { count, flush } = rt.telemetry;
  const keysStage = rt.config.USAGE_KEYS_STAGE ?? rt.config.STAGE;
  const unauthorized = () => {
    // Denials apart from failures (the function's Errors count both): an unknown or revoked key, answered 401.
    count('AuthorizerDenied');
    flush();
    return unauthorizedError();
  };
  return async (event: APIGatewayTokenAuthorizerEvent, context?: Context): Promise<APIGatewayAuthorizerResult> => {
    rt.telemetry.begin(context);
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
    let found = await readKeyAndStanding(rt.storage, keyHash).catch(failed);
    // A secret rotated with an overlap (`keys rotate --overlap`) is accepted until the overlap ends, as the key it was
    // rotated into: that record and its standing decide, and a refusal is recorded on that hash. One hop only: an
    // overlap item leading to another is refused.
    const target = overlapTarget(found.record, Math.floor(rt.now() / 1000));
    if (target) {
      keyHash = target;
      found = await readKeyAndStanding(rt.storage, target).catch(failed);
    }
    const auth = usableKey(found.record, keysStage);
    if (!auth) throw unauthorized();
    if (form === 'unchecked') {
      // A key of the old form still in use: when this stays 0, the stage can refuse the form (OLD_KEY_FORM).
      count('OldKeyFormAccepted');
      flush();
    }
    const nowSec = Math.floor(rt.now() / 1000);
    const decision = gateDecision(found.standing, nowSec);
    // A Deny says when the key is served again and who banned it (domain/keys.ts denyContext), an Allow what its
    // quota's refusal says (quotaContext), for the gateway responses to map.
    const ttl = rt.config.AUTH_CACHE_TTL_SECONDS;
    const deny =
      decision === 'deny'
        ? denyContext(found.standing!.bannedUntil!, nowSec, ttl, found.standing!.bannedBy)
        : quotaContext(decision, auth.perDay, nowSec);
    return {
      principalId: auth.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: decision === 'deny' ? 'Deny' : 'Allow',
            Resource: stageWildcard(event.methodArn),
          },
        ],
      },
      context: { keyId: auth.keyId, plan: auth.plan, perMinute: auth.perMinute, perDay: auth.perDay, keyHash, ...deny },
      // The API key of the usage-plan backstop: the pool member its key id maps to in its plan's (or Enterprise
      // bracket's) pool (domain/keys.ts usageKeyOf; a key made before pools: its own, derived from its key id, never
      // the client's secret); for a key on probation its pool's probation key, and for a key whose day is spent the
      // spent-keys API key, whose usage plan refuses it before it counts against anything it shares. An Enterprise
      // bracket's probation member only when the data says it exists (storage/bracket-probation.ts).
      usageIdentifierKey: await probationUsageKey(rt.storage, auth, decision, keysStage),
    };
  };
}
