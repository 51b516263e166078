/**
 * The TOKEN authorizer: `Authorization: Bearer <key>` → SHA-256 → keys table. Unknown, revoked or malformed keys
 * throw exactly "Unauthorized" (API Gateway answers 401). A storage failure throws another error, which API Gateway
 * answers with AUTHORIZER_FAILURE (mapped to 503): it fails closed, never letting a request through.
 * The policy allows the whole API stage, so a cached result works on every route.
 */
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authenticate, gateDecision, gateUsageKey } from '../domain/keys.ts';
// The key store and the standing reader alone, so the authorizer bundle carries no pet or limiter code.
import { createStandingReader } from '../storage/standing-reader.ts';
import { createKeyStore } from '../storage/key-store.ts';
import type { Runtime } from '../shared/runtime.ts';

/** `arn:aws:execute-api:region:account:apiId/stage/METHOD/path` → `arn:aws:execute-api:region:account:apiId/stage/*` */
export function stageWildcard(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
}

export function authorizerHandler(rt: Runtime) {
  const keyStore = createKeyStore(rt.storage);
  const standings = createStandingReader(rt.storage);
  const { count, flush } = rt.telemetry;
  const keysStage = rt.config.USAGE_KEYS_STAGE ?? rt.config.STAGE;
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const auth = await authenticate(keyStore, event.authorizationToken, keysStage).catch((err: unknown) => {
      // Fail closed: API Gateway answers AUTHORIZER_FAILURE (mapped to 503), never lets the request through. The
      // alarm watches this metric, not the function's Errors: the `Unauthorized` thrown for unknown keys counts there.
      const e = err as { name?: string; cause?: unknown } | undefined;
      count('AuthorizerFailure', { reason: String(e?.cause ?? e?.name ?? 'Error') });
      throw err;
    });
    if (!auth) {
      // Denials apart from failures (the function's Errors count both): an unknown or revoked key, answered 401.
      count('AuthorizerDenied');
      flush();
      throw new Error('Unauthorized');
    }
    // Best effort: the functions' limiter enforces the ban and the day quota anyway, so a failed read lets the
    // request on.
    const nowSec = Math.floor(rt.now() / 1000);
    const standing = await standings.standing(auth.keyId, nowSec).catch(() => {
      // Not an authorizer failure (the key was checked, the request goes on): a storage outage.
      count('StorageUnavailable', { reason: 'BanCheck' });
      return undefined;
    });
    const decision = gateDecision(auth, standing, nowSec);
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
      context: { keyId: auth.keyId, plan: auth.plan, perMinute: auth.perMinute, perDay: auth.perDay },
      // The API key of the usage-plan backstop: the key's own (derived from its key id, never the client's secret),
      // for a Free key the pool member its key id maps to (domain/keys.ts usageKeyOf), and for a key whose day is
      // spent the spent-keys API key, whose usage plan refuses it before it counts against either.
      usageIdentifierKey: gateUsageKey(auth, decision, keysStage),
    };
  };
}
