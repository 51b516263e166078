/**
 * The TOKEN authorizer as API Gateway runs it: the identity header must be present and match the identity
 * validation expression (else 401 without invoking the function); the function's policy must allow the method
 * ARN; results are cached per token for the template's TTL, and a cached policy serves every method it allows.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './intrinsics.ts';
import { invoke, type LocalFunction } from './lambda.ts';
import type { AuthorizerDef } from './template.ts';

export type AuthOutcome =
  | {
      readonly kind: 'allow';
      readonly principalId: string;
      readonly context: Record<string, unknown>;
      readonly usageIdentifierKey?: string;
    }
  | {
      readonly kind: 'reject';
      readonly type: 'UNAUTHORIZED' | 'ACCESS_DENIED' | 'AUTHORIZER_FAILURE' | 'AUTHORIZER_CONFIGURATION_ERROR';
      /** A Deny's context: what its gateway response's `$context.authorizer.<key>` reads. */
      readonly context?: Record<string, unknown>;
    };

export function methodArn(stage: string, method: string, path: string): string {
  return `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:local/${stage}/${method}${path}`;
}

/** Policy resource patterns as regular expressions, compiled once each (they are few: one per stage wildcard). */
const compiled = new Map<string, RegExp>();

function resourceMatches(pattern: string, arn: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    if (compiled.size < 1_000) compiled.set(pattern, re);
  }
  return re.test(arn);
}

function allows(policy: APIGatewayAuthorizerResult['policyDocument'], arn: string): boolean {
  const stmts = policy.Statement as Array<{ Effect: string; Resource?: string | string[] }>;
  const matches = (s: { Resource?: string | string[] }) =>
    [s.Resource ?? []].flat().some((r) => resourceMatches(r, arn));
  if (stmts.some((s) => s.Effect === 'Deny' && matches(s))) return false;
  return stmts.some((s) => s.Effect === 'Allow' && matches(s));
}

function isResult(r: unknown): r is APIGatewayAuthorizerResult {
  const o = r as APIGatewayAuthorizerResult | undefined;
  return !!o && typeof o.principalId === 'string' && Array.isArray(o.policyDocument?.Statement);
}

export class LocalAuthorizer {
  private readonly cache = new Map<string, { result: APIGatewayAuthorizerResult; expires: number }>();
  private readonly pattern?: RegExp;
  private readonly ttlMs: number;
  readonly def: AuthorizerDef;
  private readonly fn: LocalFunction;

  private readonly now: () => number;
  private readonly invocable: boolean;

  /**
   * `ttlSeconds` overrides the template's result TTL (e.g. 0 so a revocation shows at once). The cache ages on the
   * gateway's clock, the one the functions get, so a test that moves time moves the cache with it.
   */
  constructor(
    def: AuthorizerDef,
    fn: LocalFunction,
    ttlSeconds?: number,
    now: () => number = Date.now,
    /** `invocable: false`: no Lambda permission of the template lets API Gateway invoke it (permissions.ts). */
    access: { readonly invocable: boolean } = { invocable: true },
  ) {
    this.invocable = access.invocable;
    this.def = def;
    this.fn = fn;
    this.now = now;
    this.pattern = def.validationExpression ? new RegExp(def.validationExpression) : undefined;
    this.ttlMs = (ttlSeconds ?? def.ttlSeconds) * 1000;
  }

  async authorize(token: string | undefined, arn: string): Promise<AuthOutcome> {
    if (!token || (this.pattern && !this.pattern.test(token))) return { kind: 'reject', type: 'UNAUTHORIZED' };
    const result = await this.result(token, arn);
    if (!('policyDocument' in result)) return result;
    if (!allows(result.policyDocument, arn))
      return { kind: 'reject', type: 'ACCESS_DENIED', context: { ...result.context, principalId: result.principalId } };
    return {
      kind: 'allow',
      principalId: result.principalId,
      context: { ...result.context, principalId: result.principalId, integrationLatency: 0 },
      ...(typeof result.usageIdentifierKey === 'string' ? { usageIdentifierKey: result.usageIdentifierKey } : {}),
    };
  }

  private async result(
    token: string,
    arn: string,
  ): Promise<APIGatewayAuthorizerResult | Extract<AuthOutcome, { kind: 'reject' }>> {
    const cached = this.cache.get(token);
    if (cached && cached.expires > this.now() && cached.expires - this.ttlMs <= this.now()) return cached.result;
    // AWS answers a failed invocation of the authorizer (no permission) as a configuration error.
    if (!this.invocable) return { kind: 'reject', type: 'AUTHORIZER_CONFIGURATION_ERROR' };
    const out = await invoke<APIGatewayAuthorizerResult>(this.fn, {
      type: 'TOKEN',
      authorizationToken: token,
      methodArn: arn,
    });
    if (!out.ok) {
      const unauthorized = (out.error as Error | undefined)?.message === 'Unauthorized';
      return { kind: 'reject', type: unauthorized ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE' };
    }
    if (!isResult(out.result)) return { kind: 'reject', type: 'AUTHORIZER_CONFIGURATION_ERROR' };
    if (this.ttlMs > 0) this.cache.set(token, { result: out.result, expires: this.now() + this.ttlMs });
    return out.result;
  }
}
