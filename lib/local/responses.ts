/**
 * Gateway responses as API Gateway produces them from the template: the response type's own entry if the template
 * customises it, else DEFAULT_4XX / DEFAULT_5XX (whose status code, when set, replaces the type's own), else AWS's
 * default. Status, static headers and the `application/json` body template come from the template; the body's
 * `$context` references are rendered per request.
 */
import { checkTemplate, knownPaths, render, type MappingContext } from './mapping.ts';
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

function context(type: string, message: string, r: RequestFacts): MappingContext {
  return {
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
    const known = knownPaths(
      context('DEFAULT_4XX', 'm', {
        requestId: 'r',
        sourceIp: 'i',
        httpMethod: 'GET',
        path: '/',
        resourcePath: '/',
        stage: 's',
      }),
    );
    for (const [type, def] of defs)
      for (const t of Object.values(def.templates)) checkTemplate(`gateway response ${type}`, t, known);
  }

  answer(type: ResponseType, r: RequestFacts): GatewayAnswer {
    const own = DEFAULTS[type]!;
    const fallback = own.status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
    const def = this.defs.get(type) ?? this.defs.get(fallback);
    const status = def?.statusCode ?? own.status;
    const template = def?.templates['application/json'] ?? '{"message":$context.error.messageString}';
    return {
      status,
      headers: { 'Content-Type': 'application/json', ...def?.headers },
      body: render(template, context(type, own.message, r)),
    };
  }
}
