/**
 * Reads what the local gateway emulates out of a synthesized CloudFormation template: the REST API's stage (its
 * method throttle included), resources and methods (Lambda proxy or MOCK), the TOKEN authorizer, usage plans,
 * gateway responses and the functions with their handler modules and environment. Anything the emulator would
 * silently get wrong (an integration type or header mapping it does not know) fails here, at start-up.
 */
import { DEPLOY_HOOK_METADATA, FUNCTION_METADATA } from '../stacks/metadata.ts';
import { invocationRules } from './permissions.ts';
import { gatewayResponseHeaders } from './responses.ts';
import { methodKey } from './stage-throttle.ts';
import type {
  CfnResource,
  CfnTemplate,
  FunctionDef,
  MethodBase,
  MethodDef,
  AuthorizerDef,
  UsagePlanDef,
  GatewayResponseDef,
  ApiModel,
  StageThrottleDef,
  ThrottleDef,
} from './template-model.ts';

// Its callers take the model's types from here, with the reader.
export type * from './template-model.ts';

const byType = (t: CfnTemplate, type: string): [string, CfnResource][] =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);

/** The logical id a `Ref` or `Fn::GetAtt` names, wherever it sits in a value. */
export function referencedId(value: unknown, attribute?: string): string | undefined {
  if (Array.isArray(value)) return value.map((v) => referencedId(v, attribute)).find(Boolean);
  if (!value || typeof value !== 'object') return undefined;
  const o = value as Record<string, unknown>;
  if (attribute === undefined && typeof o.Ref === 'string') return o.Ref;
  const getAtt = o['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt && (attribute === undefined || getAtt[1] === attribute)) return getAtt[0];
  return Object.values(o)
    .map((v) => referencedId(v, attribute))
    .find(Boolean);
}

/**
 * The function a Lambda invocation URI calls: a function's `Arn`, or (what the stack uses) a `Ref` to an
 * AWS::Lambda::Alias, whose function is the one the alias belongs to.
 */
function invokedFunctionId(t: CfnTemplate, uri: unknown): string | undefined {
  const direct = referencedId(uri, 'Arn');
  if (direct && t.Resources[direct]?.Type === 'AWS::Lambda::Function') return direct;
  const parts = JSON.stringify(uri ?? null).matchAll(/"Ref":"([^"]+)"/g);
  for (const [, id] of parts) {
    const r = t.Resources[id!];
    if (r?.Type === 'AWS::Lambda::Alias') return referencedId(r.Properties?.FunctionName);
  }
  return direct;
}

/** `'text'` → text; any other mapping expression is not emulated. */
function staticValue(where: string, expr: string): string {
  const m = /^'(.*)'$/s.exec(expr);
  if (!m) throw new Error(`${where}: the local gateway only emulates static header values, not ${expr}`);
  return m[1]!;
}

function staticHeaders(
  where: string,
  params: Record<string, string> | undefined,
  prefix: string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(params ?? {}).map(([k, v]) => {
      if (!k.startsWith(prefix)) throw new Error(`${where}: unexpected response parameter ${k}`);
      return [k.slice(prefix.length), staticValue(`${where} ${k}`, v)];
    }),
  );
}

function resourcePaths(t: CfnTemplate): Map<string, string> {
  const raw = new Map(byType(t, 'AWS::ApiGateway::Resource').map(([id, r]) => [id, r.Properties!]));
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const props = raw.get(id)!;
    const parent = props.ParentId?.Ref as string | undefined;
    const path = `${parent ? pathOf(parent) : ''}/${props.PathPart}`;
    paths.set(id, path);
    return path;
  };
  for (const id of raw.keys()) pathOf(id);
  return paths;
}

function methodOf(t: CfnTemplate, id: string, p: Record<string, any>, paths: Map<string, string>): MethodDef {
  const resourceId = p.ResourceId?.Ref as string | undefined;
  const base: MethodBase = {
    httpMethod: p.HttpMethod,
    resourcePath: resourceId ? paths.get(resourceId)! : '/',
    apiKeyRequired: p.ApiKeyRequired === true,
    authorizerId: p.AuthorizationType === 'CUSTOM' ? referencedId(p.AuthorizerId) : undefined,
  };
  const integration = p.Integration ?? {};
  if (integration.Type === 'AWS_PROXY') {
    const functionId = invokedFunctionId(t, integration.Uri);
    if (!functionId) throw new Error(`${id}: no Lambda function in the integration URI`);
    return { ...base, kind: 'lambda', functionId };
  }
  if (integration.Type === 'MOCK') {
    return {
      ...base,
      kind: 'mock',
      passthrough: integration.PassthroughBehavior ?? 'WHEN_NO_MATCH',
      requestTemplates: integration.RequestTemplates ?? {},
      responses: (integration.IntegrationResponses ?? []).map((r: Record<string, any>) => ({
        statusCode: Number(r.StatusCode),
        selectionPattern: r.SelectionPattern,
        headers: staticHeaders(id, r.ResponseParameters, 'method.response.header.'),
        templates: r.ResponseTemplates ?? {},
      })),
    };
  }
  throw new Error(`${id}: the local gateway does not emulate ${integration.Type} integrations`);
}

/** A MethodSettings ResourcePath, its `/`s after the first escaped as `~1` (`~` as `~0`): `/~1pets` → `/pets`. */
function settingPath(encoded: string): string {
  return encoded.slice(1).replace(/~1/g, '/').replace(/~0/g, '~') || '/';
}

/**
 * The stage's MethodSettings throttle: the setting for every method (`*` on `/*`), and those for one method. A
 * setting for one method that leaves out a figure keeps the default's. Any other form (a wildcard on one resource or
 * one method, a method the API does not have, a negative figure) fails here rather than being emulated wrongly.
 */
function stageThrottleOf(id: string, stage: Record<string, any>, methods: readonly MethodDef[]): StageThrottleDef {
  const settings = (stage.MethodSettings ?? []) as Record<string, any>[];
  const figures = (s: Record<string, any>, base?: ThrottleDef): ThrottleDef | undefined => {
    const rateLimit = (s.ThrottlingRateLimit as number | undefined) ?? base?.rateLimit;
    const burstLimit = (s.ThrottlingBurstLimit as number | undefined) ?? base?.burstLimit;
    if (rateLimit === undefined || burstLimit === undefined) return undefined;
    if (rateLimit < 0 || burstLimit < 0)
      throw new Error(`${id}: the local gateway does not emulate negative throttle figures`);
    return { rateLimit, burstLimit };
  };
  const every = settings.find((s) => s.HttpMethod === '*' && s.ResourcePath === '/*');
  const fallback = every ? figures(every) : undefined;
  const known = new Set(methods.map((m) => methodKey(m.httpMethod, m.resourcePath)));
  const own = new Map<string, ThrottleDef>();
  for (const s of settings) {
    if (s === every) continue;
    const path = typeof s.ResourcePath === 'string' && s.ResourcePath.startsWith('/') ? s.ResourcePath : '';
    const key = methodKey(String(s.HttpMethod), settingPath(path));
    if (!path || path.includes('*') || s.HttpMethod === '*' || !known.has(key))
      throw new Error(
        `${id}: the local gateway emulates method settings for every method (* on /*) or for one method of the API, not ${s.HttpMethod} ${s.ResourcePath}`,
      );
    const f = figures(s, fallback);
    if (f) own.set(key, f);
  }
  return { ...(fallback ? { default: fallback } : {}), methods: own };
}

function functionsOf(t: CfnTemplate): Map<string, FunctionDef> {
  return new Map(
    // The pre-traffic hook is CodeDeploy's, not the API's: nothing the gateway routes to, nothing to build here.
    byType(t, 'AWS::Lambda::Function')
      .filter(([, r]) => r.Metadata?.[DEPLOY_HOOK_METADATA] === undefined)
      .map(([logicalId, r]) => {
        const name = r.Metadata?.[FUNCTION_METADATA];
        if (typeof name !== 'string')
          throw new Error(`${logicalId}: no ${FUNCTION_METADATA} metadata naming the function`);
        const p = r.Properties!;
        const assetPath = r.Metadata?.['aws:asset:path'];
        return [
          logicalId,
          {
            logicalId,
            name,
            environment: p.Environment?.Variables ?? {},
            timeoutSeconds: p.Timeout ?? 3,
            memoryMb: p.MemorySize ?? 128,
            ...(typeof p.ReservedConcurrentExecutions === 'number'
              ? { reservedConcurrency: p.ReservedConcurrentExecutions }
              : {}),
            ...(typeof assetPath === 'string' ? { assetPath } : {}),
          },
        ];
      }),
  );
}

function authorizersOf(t: CfnTemplate): Map<string, AuthorizerDef> {
  return new Map(
    byType(t, 'AWS::ApiGateway::Authorizer').map(([id, r]) => {
      const p = r.Properties!;
      const header = /^method\.request\.header\.(.+)$/.exec(p.IdentitySource ?? '');
      if (p.Type !== 'TOKEN' || !header)
        throw new Error(`${id}: the local gateway emulates TOKEN authorizers on one header only`);
      return [
        id,
        {
          functionId: invokedFunctionId(t, p.AuthorizerUri)!,
          identityHeader: header[1]!,
          validationExpression: p.IdentityValidationExpression,
          // API Gateway's default when the property is absent.
          ttlSeconds: p.AuthorizerResultTtlInSeconds ?? 300,
        },
      ];
    }),
  );
}

function usagePlansOf(t: CfnTemplate): Map<string, UsagePlanDef> {
  return new Map(
    byType(t, 'AWS::ApiGateway::UsagePlan').map(([id, r]) => {
      const p = r.Properties!;
      return [
        id,
        {
          id,
          rateLimit: p.Throttle?.RateLimit,
          burstLimit: p.Throttle?.BurstLimit,
          ...(p.Quota ? { quota: { limit: p.Quota.Limit, period: p.Quota.Period } } : {}),
        },
      ];
    }),
  );
}

function usagePlanKeysOf(t: CfnTemplate): Map<string, string> {
  const values = new Map(
    byType(t, 'AWS::ApiGateway::ApiKey')
      .filter(([, r]) => typeof r.Properties?.Value === 'string')
      .map(([id, r]) => [id, r.Properties!.Value as string] as const),
  );
  const out = new Map<string, string>();
  for (const [, r] of byType(t, 'AWS::ApiGateway::UsagePlanKey')) {
    const value = values.get(referencedId(r.Properties?.KeyId) ?? '');
    const plan = referencedId(r.Properties?.UsagePlanId);
    if (value && plan) out.set(value, plan);
  }
  return out;
}

function gatewayResponsesOf(t: CfnTemplate): Map<string, GatewayResponseDef> {
  return new Map(
    byType(t, 'AWS::ApiGateway::GatewayResponse').map(([id, r]) => {
      const p = r.Properties!;
      return [
        p.ResponseType as string,
        {
          ...(p.StatusCode ? { statusCode: Number(p.StatusCode) } : {}),
          ...gatewayResponseHeaders(id, p.ResponseParameters),
          templates: p.ResponseTemplates ?? {},
        },
      ];
    }),
  );
}

/** The API model of a template with exactly one REST API stage. */
export function apiModel(t: CfnTemplate): ApiModel {
  const stages = byType(t, 'AWS::ApiGateway::Stage');
  if (stages.length !== 1) throw new Error(`expected one API Gateway stage, found ${stages.length}`);
  const paths = resourcePaths(t);
  const [stageId, stage] = stages[0]!;
  const methods = byType(t, 'AWS::ApiGateway::Method').map(([id, r]) => methodOf(t, id, r.Properties!, paths));
  return {
    stageName: stage.Properties!.StageName,
    methods,
    stageThrottle: stageThrottleOf(stageId, stage.Properties!, methods),
    authorizers: authorizersOf(t),
    usagePlans: usagePlansOf(t),
    usagePlanKeys: usagePlanKeysOf(t),
    gatewayResponses: gatewayResponsesOf(t),
    functions: functionsOf(t),
    invocations: invocationRules(t),
  };
}
