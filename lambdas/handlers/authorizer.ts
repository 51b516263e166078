/**
 * The TOKEN authorizer: `Authorization: Bearer <key>` → SHA-256 → the key record and the key's standing, in one
 * BatchGetItem (one round trip per cache miss). Unknown, revoked or malformed keys throw exactly "Unauthorized" (API
 * Gateway answers 401); a token that fails the key's own check (domain/keys.ts keyForm) does so without a read. A
 * storage failure throws another error, which API Gateway answers with AUTHORIZER_FAILURE (mapped to 503): it fails
 * closed, never letting a request through. A banned key and a key whose day is spent are denied (429 key_banned or
 * quota_exceeded; the Deny's context carries the function's code, message and headers for the gateway response to
 * map), before they reach a function or count against their plan's usage plan. An allowed key is counted against
 * its plan's API key. The policy names the whole API stage, so a cached result works on every route.
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { denyContext, gateDecision, hashKey, keyForm, overlapTarget, parseBearer, usableKey } from '../domain/keys.ts';
// The key and standing lookup alone, so the authorizer bundle carries no pet or limiter code.
import { readKeyAndStanding } from '../storage/standing.ts';
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
    // A Deny carries what the function would answer in that standing (domain/keys.ts denyContext).
    const deny =
      decision === 'allow'
        ? {}
        : denyContext(decision, auth, found.standing!, nowSec, rt.config.AUTH_CACHE_TTL_SECONDS);
    return {
      principalId: auth.keyId,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: decision === 'allow' ? 'Allow' : 'Deny',
            Resource: stageWildcard(event.methodArn),
          },
        ],
      },
      context: { keyId: auth.keyId, plan: auth.plan, perMinute: auth.perMinute, perDay: auth.perDay, keyHash, ...deny },
      // Its plan's API key: API Gateway counts the request against that plan's usage plan.
      usageIdentifierKey: auth.usageIdentifierKey,
    };
  };
}
