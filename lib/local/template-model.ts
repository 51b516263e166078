/**
 * The model the local gateway emulates, as lib/local/template.ts reads it out of a synthesized template: the REST
 * API's methods (Lambda proxy or MOCK), the stage's method throttle, its authorizers, usage plans, gateway responses
 * and functions.
 */
import type { InvocationRules } from './permissions.ts';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly Metadata?: Record<string, unknown>;
}
export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

export interface FunctionDef {
  readonly logicalId: string;
  /** The function's name (an operationId, or the authorizer's): what its handler factory is listed under. */
  readonly name: string;
  /** Unresolved: values may be intrinsics (intrinsics.ts resolves them). */
  readonly environment: Record<string, unknown>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** ReservedConcurrentExecutions: invocations past this many at once are throttled. @default - unreserved */
  readonly reservedConcurrency?: number;
  /** The bundle's directory in the assembly, when bundled. */
  readonly assetPath?: string;
}

export interface IntegrationResponse {
  readonly statusCode: number;
  readonly selectionPattern?: string;
  /** Static header values (`'…'` in the template). */
  readonly headers: Record<string, string>;
  readonly templates: Record<string, string>;
}

export interface MethodBase {
  readonly httpMethod: string;
  readonly resourcePath: string;
  readonly apiKeyRequired: boolean;
  readonly authorizerId?: string;
}
export interface LambdaMethod extends MethodBase {
  readonly kind: 'lambda';
  readonly functionId: string;
}
export interface MockMethod extends MethodBase {
  readonly kind: 'mock';
  readonly passthrough: 'WHEN_NO_MATCH' | 'WHEN_NO_TEMPLATES' | 'NEVER';
  readonly requestTemplates: Record<string, string>;
  readonly responses: readonly IntegrationResponse[];
}
export type MethodDef = LambdaMethod | MockMethod;

export interface AuthorizerDef {
  readonly functionId: string;
  /** The request header named by the identity source. */
  readonly identityHeader: string;
  readonly validationExpression?: string;
  readonly ttlSeconds: number;
}

export interface UsagePlanDef {
  readonly id: string;
  readonly rateLimit?: number;
  readonly burstLimit?: number;
  readonly quota?: { readonly limit: number; readonly period: 'DAY' | 'WEEK' | 'MONTH' };
}

/** A token bucket's figures: refill in requests per second, capacity in requests. */
export interface ThrottleDef {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * The stage's throttle (the stage's MethodSettings): AWS gives each method a bucket of its own with these figures,
 * shared by every caller of the method.
 */
export interface StageThrottleDef {
  /** The figures of the setting for every method (`*` on `/*`); absent: the stage sets none. */
  readonly default?: ThrottleDef;
  /** The figures of a setting for one method, which replace the default there, by `<HTTP method> <resource path>`. */
  readonly methods: ReadonlyMap<string, ThrottleDef>;
}

export interface GatewayResponseDef {
  readonly statusCode?: number;
  /** Static header values. */
  readonly headers: Record<string, string>;
  /** Headers mapped from a context variable (`context.<path>`): header name → path (`authorizer.<key>`). */
  readonly contextHeaders?: Record<string, string>;
  readonly templates: Record<string, string>;
}

export interface ApiModel {
  readonly stageName: string;
  readonly methods: readonly MethodDef[];
  /** Absent (a model built by hand): no method is throttled by the stage, only by the account. */
  readonly stageThrottle?: StageThrottleDef;
  readonly authorizers: ReadonlyMap<string, AuthorizerDef>;
  readonly usagePlans: ReadonlyMap<string, UsagePlanDef>;
  /** The API keys the template itself puts on a usage plan: key value → usage plan id. */
  readonly usagePlanKeys?: ReadonlyMap<string, string>;
  readonly gatewayResponses: ReadonlyMap<string, GatewayResponseDef>;
  readonly functions: ReadonlyMap<string, FunctionDef>;
  /** Which invocations the template's Lambda permissions let API Gateway make (permissions.ts); absent: any. */
  readonly invocations?: InvocationRules;
}
