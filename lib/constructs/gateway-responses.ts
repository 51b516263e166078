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
export function errorBodyTemplate(r: Pick<GatewayResponseSpec, 'code' | 'message'>): string {
  return JSON.stringify(errorObject(r.code, r.message));
}

/**
 * Every error API Gateway itself produces answers with the spec's Error object, a JSON content type and the
 * static headers of contract/gateway-responses.ts (the gateway cannot compute X-RateLimit-* values).
 */
export class GatewayResponses extends Construct {
  constructor(scope: Construct, id: string, props: GatewayResponsesProps) {
    super(scope, id);
    for (const r of props.responses ?? GATEWAY_RESPONSES) {
      props.api.addGatewayResponse(r.type, {
        type: ResponseType.of(r.type),
        statusCode: String(r.status),
        responseHeaders: staticHeaders(r.headers),
        templates: { 'application/json': errorBodyTemplate(r) },
      });
    }
  }
}
