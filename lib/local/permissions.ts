/**
 * API Gateway's side of IAM: it may invoke a function (an integration's, or a TOKEN authorizer's) only where that
 * function's resource-based policy allows it, i.e. an AWS::Lambda::Permission of the template for the same function
 * and qualifier (a permission on the `live` alias covers invocations of `live`, nothing else) whose principal is
 * API Gateway, whose action covers `lambda:InvokeFunction`, and whose `SourceArn`, if any, matches the invocation's
 * source ARN as IAM's ArnLike does (`*` and `?`, the ARN's six parts one by one):
 * - a method: `arn:aws:execute-api:<region>:<account>:<api id>/<stage>/<METHOD>/<request path>`;
 * - an authorizer: `arn:aws:execute-api:<region>:<account>:<api id>/authorizers/<authorizer id>`.
 * Without one, AWS answers the request with a configuration error (API_CONFIGURATION_ERROR, 500, for an integration;
 * AUTHORIZER_CONFIGURATION_ERROR for an authorizer), and so does the local gateway. A permission the emulation does
 * not understand (another principal form, a source account or organization condition, a function named by a string)
 * is refused when the gateway starts, loudly, never ignored.
 */
import { LOCAL_ACCOUNT, LOCAL_REGION } from './intrinsics.ts';
import { globMatches, globPattern } from './policy.ts';
import type { CfnResource, CfnTemplate } from './template-model.ts';

/** What a Lambda invocation names: a function of the template and its qualifier (alias name; none = unqualified). */
interface Target {
  readonly functionId: string;
  readonly qualifier?: string;
}

interface Permission extends Target {
  readonly logicalId: string;
  /** Whether the permission's SourceArn matches a source ARN (no SourceArn: any source). */
  readonly matches: (sourceArn: string) => boolean;
}

/** Which invocations API Gateway may make, read off the template. */
export interface InvocationRules {
  /** Whether API Gateway may invoke `functionId` for `httpMethod` on the concrete request path. */
  methodInvocable(functionId: string, httpMethod: string, path: string): boolean;
  /** Whether API Gateway may invoke the function of the authorizer `authorizerId` (its logical id). */
  authorizerInvocable(authorizerId: string): boolean;
}

const API_GATEWAY = 'apigateway.amazonaws.com';
const UNDERSTOOD = new Set(['Action', 'FunctionName', 'Principal', 'SourceArn']);

/** A qualified ARN written out: `Fn::Join` of a function's ARN and `:<qualifier>` (how the stack names an alias). */
function joinedQualifier(value: unknown): { fn: unknown; qualifier: string } | undefined {
  const join = (value as { 'Fn::Join'?: [string, unknown[]] } | undefined)?.['Fn::Join'];
  if (!join || join[0] !== '' || join[1].length !== 2) return undefined;
  const [fn, suffix] = join[1];
  const m = typeof suffix === 'string' ? /^:([A-Za-z0-9_-]+)$/.exec(suffix) : null;
  return m ? { fn, qualifier: m[1]! } : undefined;
}

/**
 * The function and qualifier a value names: `Ref` to an alias or a function, a function's `Fn::GetAtt … Arn`, or
 * that ARN joined with `:<qualifier>`.
 */
function targetOf(t: CfnTemplate, value: unknown, where: string): Target {
  const joined = joinedQualifier(value);
  if (joined) return { functionId: targetOf(t, joined.fn, where).functionId, qualifier: joined.qualifier };
  const o = (value ?? {}) as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  const id = o.Ref ?? (o['Fn::GetAtt']?.[1] === 'Arn' ? o['Fn::GetAtt'][0] : undefined);
  const r = id ? t.Resources[id] : undefined;
  if (r?.Type === 'AWS::Lambda::Function') return { functionId: id! };
  if (r?.Type === 'AWS::Lambda::Alias' && typeof r.Properties?.Name === 'string') {
    const fn = targetOf(t, r.Properties.FunctionName, where);
    return { functionId: fn.functionId, qualifier: r.Properties.Name };
  }
  throw new Error(`${where}: the local gateway cannot tell which function ${JSON.stringify(value)} names`);
}

/**
 * The target a Lambda invocation URI (an integration's Uri, an authorizer's AuthorizerUri) calls: the function its
 * `…/functions/<ARN>/invocations` path names, the last Lambda reference in it (an authorizer's URI also names the
 * function earlier, inside the Fn::Select that picks its Region).
 */
function invokedTarget(t: CfnTemplate, uri: unknown, where: string): Target {
  const text = JSON.stringify(uri ?? null);
  const refs = [...text.matchAll(/\{"(?:Ref|Fn::GetAtt)":(?:"[^"]+"|\["[^"]+","Arn"\])\}/g)].reverse();
  for (const m of refs) {
    const named = JSON.parse(m[0]) as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    const id = named.Ref ?? named['Fn::GetAtt']![0];
    if (!/^AWS::Lambda::(Function|Alias)$/.test(t.Resources[id]?.Type ?? '')) continue;
    // A function's ARN followed by `:<qualifier>/invocations`: the URI names that alias or version.
    const qualifier = /^,":([A-Za-z0-9_-]+)\/invocations"/.exec(text.slice(m.index + m[0].length))?.[1];
    const target = targetOf(t, named, where);
    return qualifier && !target.qualifier ? { ...target, qualifier } : target;
  }
  throw new Error(`${where}: no Lambda function in ${JSON.stringify(uri)}`);
}

/**
 * A SourceArn resolved to local values: pseudo parameters, the REST API's and an authorizer's ids, the stage's
 * name. Resolving both sides alike is all the comparison needs.
 */
function resolveArn(t: CfnTemplate, value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  const o = (value ?? {}) as Record<string, any>;
  if (o['Fn::Join']) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => resolveArn(t, p, where)).join(sep);
  }
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': LOCAL_REGION,
    'AWS::AccountId': LOCAL_ACCOUNT,
  };
  if (typeof o.Ref === 'string') {
    if (pseudo[o.Ref]) return pseudo[o.Ref];
    const r: CfnResource | undefined = t.Resources[o.Ref];
    if (r?.Type === 'AWS::ApiGateway::RestApi' || r?.Type === 'AWS::ApiGateway::Authorizer') return o.Ref;
    if (r?.Type === 'AWS::ApiGateway::Stage') return String(r.Properties?.StageName);
  }
  throw new Error(`${where}: the local gateway cannot resolve ${JSON.stringify(value)} in a SourceArn`);
}

/**
 * IAM's ArnLike, compiled once per pattern (the gateway asks on every request): six colon-separated parts, each
 * matched on its own with `*` and `?` (the last part keeps its colons).
 */
function arnLike(pattern: string): (arn: string) => boolean {
  const split = (s: string) => {
    const parts = s.split(':');
    return [...parts.slice(0, 5), parts.slice(5).join(':')];
  };
  const parts = split(pattern).map((g) => globPattern(g, false));
  return (arn) => {
    const a = split(arn);
    return parts.length === a.length && parts.every((re, i) => re.test(a[i]!));
  };
}

function permissionsOf(t: CfnTemplate): Permission[] {
  return Object.entries(t.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Permission')
    .flatMap(([id, r]) => {
      const p = r.Properties ?? {};
      const where = `the Lambda permission emulation (${id})`;
      const extra = Object.keys(p).filter((k) => !UNDERSTOOD.has(k));
      if (extra.length) throw new Error(`${where}: ${extra.join(', ')} is not emulated; refusing rather than guessing`);
      if (typeof p.Action !== 'string') throw new Error(`${where}: Action must be a string`);
      // A principal given by reference (a role's ARN: the deploy's service role invoking the pre-traffic check) is
      // no service principal, so not API Gateway.
      if (typeof p.Principal !== 'string') return [];
      // A permission for another service (or none for API Gateway) grants API Gateway nothing.
      if (p.Principal !== API_GATEWAY || !globMatches(p.Action, 'lambda:InvokeFunction', true)) return [];
      const target = targetOf(t, p.FunctionName, where);
      const matches = p.SourceArn === undefined ? () => true : arnLike(resolveArn(t, p.SourceArn, where));
      return [{ ...target, logicalId: id, matches }];
    });
}

/** The invocation rules of a template with one REST API and one stage (what the local gateway serves). */
export function invocationRules(t: CfnTemplate): InvocationRules {
  const [api, ...more] = Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::RestApi');
  if (!api || more.length) throw new Error('the Lambda permission emulation expects one REST API');
  const stage = Object.values(t.Resources).find((r) => r.Type === 'AWS::ApiGateway::Stage');
  const prefix = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${api[0]}`;
  const permissions = permissionsOf(t);
  const allowed = (target: Target, sourceArn: string) =>
    permissions.some(
      (p) => p.functionId === target.functionId && p.qualifier === target.qualifier && p.matches(sourceArn),
    );
  // What each function is invoked as by its integrations: one qualifier per function (the stack's `live`).
  const invokedAs = new Map<string, Target>();
  for (const [id, r] of Object.entries(t.Resources)) {
    const integration = r.Properties?.Integration;
    if (r.Type !== 'AWS::ApiGateway::Method' || integration?.Type !== 'AWS_PROXY') continue;
    const target = invokedTarget(t, integration.Uri, `the Lambda permission emulation (${id})`);
    const known = invokedAs.get(target.functionId);
    if (known && known.qualifier !== target.qualifier)
      throw new Error(`${id}: a function invoked under two qualifiers is not emulated`);
    invokedAs.set(target.functionId, target);
  }
  const authorizers = new Map(
    Object.entries(t.Resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGateway::Authorizer')
      .map(([id, r]) => {
        const target = invokedTarget(t, r.Properties?.AuthorizerUri, `the Lambda permission emulation (${id})`);
        return [id, allowed(target, `${prefix}/authorizers/${id}`)] as const;
      }),
  );
  return {
    methodInvocable: (functionId, httpMethod, path) => {
      const target = invokedAs.get(functionId) ?? { functionId };
      return allowed(target, `${prefix}/${String(stage?.Properties?.StageName)}/${httpMethod}${path}`);
    },
    authorizerInvocable: (authorizerId) => authorizers.get(authorizerId) ?? false,
  };
}
