/**
 * Gateway responses as API Gateway produces them from the template: the response type's own entry if the template
 * customises it, else DEFAULT_4XX / DEFAULT_5XX (whose status code, when set, replaces the type's own), else AWS's
 * default. Status, headers and the `application/json` body template come from the template; header mappings of a
 * context variable and the body's `$context` references are rendered per request, `$context.authorizer.<key>` from
 * the context of the authorizer's answer behind it (a Deny's, or an Allow's that a usage plan then refused),
 * stringified as API Gateway does.
 */
import { checkTemplate, knownPaths, lookup, render, type MappingContext } from './mapping.ts';
import type { GatewayResponseDef } from './template.ts';

/** AWS's default status and `$context.error.message` per response type (API Gateway developer guide). */
const DEFAULTS: Readonly<Record<string, { status: number; message: string }>> = {
  ACCESS_DENIED: { status: 403, message: 'User is not authorized to access this resource' },
  API_CONFIGURATION_ERROR: { status: 500, message: 'Internal server error' },
  AUTHORIZER_CONFIGURATION_ERROR: { status: 500, message: 'Internal server error' },
  AUTHORIZER_FAILURE: { status: 500, message: 'Internal server error' },
  BAD_REQUEST_BODY: { status: 400, message: 'Invalid request body' },
  BAD_REQUEST_PARAMETERS: { status: 400, message: 'Invalid request parameters' },
  EXPIRED_TOKEN: { status: 403, message: 'Token is expired' },
  INTEGRATION_FAILURE: { status: 504, message: 'Internal server error' },
  INTEGRATION_TIMEOUT: { status: 504, message: 'Endpoint request timed out' },
  INVALID_API_KEY: { status: 403, message: 'Forbidden' },
  INVALID_SIGNATURE: { status: 403, message: 'Invalid signature' },
  MISSING_AUTHENTICATION_TOKEN: { status: 403, message: 'Missing Authentication Token' },
  QUOTA_EXCEEDED: { status: 429, message: 'Limit Exceeded' },
  REQUEST_TOO_LARGE: { status: 413, message: 'Request Too Long' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'Resource not found' },
  THROTTLED: { status: 429, message: 'Too Many Requests' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Media Type' },
  WAF_FILTERED: { status: 403, message: 'Forbidden' },
  /** A failed Lambda proxy integration (error, bad result): 502 with no type of its own. */
  DEFAULT_5XX: { status: 502, message: 'Internal server error' },
  DEFAULT_4XX: { status: 400, message: 'Bad Request' },
};

export type ResponseType = keyof typeof DEFAULTS;

export interface RequestFacts {
  readonly requestId: string;
  readonly sourceIp: string;
  readonly httpMethod: string;
  readonly path: string;
  readonly resourcePath: string;
  readonly stage: string;
}

export interface GatewayAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** What the authorizer's `context` gives `$context.authorizer.<key>`: each value as a string. */
export type AuthorizerValues = Readonly<Record<string, unknown>>;

const HEADER_PREFIX = 'gatewayresponse.header.';
const CONTEXT_VARIABLE = /^context((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$/;
/** A Lambda authorizer's context key: letters, digits and `_` (API Gateway's `$context.authorizer.<property>`). */
const AUTHORIZER_PATH = /^authorizer\.[A-Za-z0-9_]+$/;

/**
 * A gateway response's header mappings as API Gateway takes them: a static value in single quotes, or a context
 * variable (`context.<name>`, without the `$`). Any other expression is not emulated: it fails at start-up.
 */
export function gatewayResponseHeaders(
  where: string,
  params: Readonly<Record<string, string>> | undefined,
): Pick<GatewayResponseDef, 'headers' | 'contextHeaders'> {
  const headers: Record<string, string> = {};
  const contextHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    if (!k.startsWith(HEADER_PREFIX)) throw new Error(`${where}: unexpected response parameter ${k}`);
    const name = k.slice(HEADER_PREFIX.length);
    const literal = /^'(.*)'$/s.exec(v);
    const variable = CONTEXT_VARIABLE.exec(v);
    if (literal) headers[name] = literal[1]!;
    else if (variable) contextHeaders[name] = variable[1]!.slice(1);
    else throw new Error(`${where} ${k}: the local gateway emulates static values and context variables, not ${v}`);
  }
  return Object.keys(contextHeaders).length > 0 ? { headers, contextHeaders } : { headers };
}

function stringified(values: AuthorizerValues | undefined): MappingContext {
  return Object.fromEntries(
    Object.entries(values ?? {})
      .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))
      .map(([k, v]) => [k, String(v)]),
  );
}

function context(type: string, message: string, r: RequestFacts, authorizer?: AuthorizerValues): MappingContext {
  return {
    authorizer: stringified(authorizer),
    requestId: r.requestId,
    extendedRequestId: r.requestId,
    httpMethod: r.httpMethod,
    path: r.path,
    resourcePath: r.resourcePath,
    stage: r.stage,
    identity: { sourceIp: r.sourceIp },
    error: { message, messageString: JSON.stringify(message), responseType: type, validationErrorString: '' },
  };
}

export class GatewayResponses {
  private readonly defs: ReadonlyMap<string, GatewayResponseDef>;

  constructor(defs: ReadonlyMap<string, GatewayResponseDef>) {
    this.defs = defs;
    const given = knownPaths(
      context('DEFAULT_4XX', 'm', {
        requestId: 'r',
        sourceIp: 'i',
        httpMethod: 'GET',
        path: '/',
        resourcePath: '/',
        stage: 's',
      }),
    );
    // The authorizer's keys are whatever its answer holds: any well-formed key is known (absent ones render empty).
    const known = (path: string) => given(path) || AUTHORIZER_PATH.test(path);
    for (const [type, def] of defs) {
      for (const t of Object.values(def.templates)) checkTemplate(`gateway response ${type}`, t, known);
      for (const [name, path] of Object.entries(def.contextHeaders ?? {}))
        if (!known(path)) throw new Error(`gateway response ${type} ${name}: context.${path} is not emulated`);
    }
  }

  /** `authorizer`: the context of the authorizer's answer behind the response (a Deny's, an Allow's), if any. */
  answer(type: ResponseType, r: RequestFacts, authorizer?: AuthorizerValues): GatewayAnswer {
    const own = DEFAULTS[type]!;
    const fallback = own.status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
    const def = this.defs.get(type) ?? this.defs.get(fallback);
    const status = def?.statusCode ?? own.status;
    const template = def?.templates['application/json'] ?? '{"message":$context.error.messageString}';
    const ctx = context(type, own.message, r, authorizer);
    // A mapping whose variable has no value sends no header: AWS documents no fallback for it, and an absent header
    // is what a client handles like an empty or unreadable one (docs/keys-and-limits.md, "What a banned key is told").
    const mapped = Object.entries(def?.contextHeaders ?? {}).flatMap(([name, path]) => {
      const v = lookup(ctx, path);
      return typeof v === 'string' || typeof v === 'number' ? [[name, String(v)] as const] : [];
    });
    return {
      status,
      headers: { 'Content-Type': 'application/json', ...def?.headers, ...Object.fromEntries(mapped) },
      body: render(template, ctx),
    };
  }
}
