import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { GATEWAY_RESPONSES, type GatewayResponseSpec } from '../../contract/gateway-responses.ts';
import { staticHeaders } from './literal.ts';
import { errorObject } from '../../contract/errors.ts';

export interface GatewayResponsesProps {
  readonly api: RestApi;
  /** @default GATEWAY_RESPONSES from contract/gateway-responses.ts */
  readonly responses?: readonly GatewayResponseSpec[];
}

/** The spec's Error object as a (static) mapping template. */
export function errorBodyTemplate(r: Pick<GatewayResponseSpec, 'code' | 'message' | 'codeFrom'>): string {
  const body = errorObject(r.code, r.message);
  return JSON.stringify(r.codeFrom ? { ...body, code: `$context.authorizer.${r.codeFrom.key}` } : body);
}

/**
 * A header mapping that reads the Lambda authorizer's `context` (API Gateway's mapping expression `context.<name>`
 * with a supported context variable, here `$context.authorizer.<key>`; written without the `$`).
 */
export function authorizerContextValue(key: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(key)) throw new Error(`an authorizer context key holds letters, digits and _: ${key}`);
  return `context.authorizer.${key}`;
}

/** The header mappings of a response: its static values, then those read from the authorizer's context. */
export function responseHeadersOf(
  r: Pick<GatewayResponseSpec, 'headers' | 'authorizerHeaders'>,
): Record<string, string> {
  return {
    ...staticHeaders(r.headers),
    ...Object.fromEntries(Object.entries(r.authorizerHeaders ?? {}).map(([h, k]) => [h, authorizerContextValue(k)])),
  };
}

/**
 * Every error API Gateway itself produces answers with the spec's Error object, a JSON content type and the
 * headers of contract/gateway-responses.ts: static (the gateway cannot compute X-RateLimit-* values), except
 * ACCESS_DENIED's, which the authorizer's Deny carries in its context (a ban or a spent day).
 */
export class GatewayResponses extends Construct {
  constructor(scope: Construct, id: string, props: GatewayResponsesProps) {
    super(scope, id);
    for (const r of props.responses ?? GATEWAY_RESPONSES) {
      props.api.addGatewayResponse(r.type, {
        type: ResponseType.of(r.type),
        statusCode: String(r.status),
        responseHeaders: responseHeadersOf(r),
        templates: { 'application/json': errorBodyTemplate(r) },
      });
    }
  }
}
