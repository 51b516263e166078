/**
 * What the REST API shows the outside world at its edge, apart from the routes: the access-log line it writes per
 * request and the TLS it accepts. Kept apart from store-api.ts so each can be read (and tested) on its own.
 */
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';

/**
 * One JSON object per request in the access log, of bounded, server-side values only: API Gateway substitutes
 * variables without escaping them, and logs unauthenticated and WAF-blocked requests too, so a client-controlled
 * value (the raw path, the user agent, a header) would let anyone write up to ~10 KB per line, kept for a year, and
 * a quote in it would break the line's JSON. The resource path is the template's (`/pets/{petId}`), never the raw
 * one; ids, numbers, enums and the source IP of the connection are all there is. Nothing here can hold a header,
 * `Authorization` included (test/infra/edge-security.test.ts renders it with hostile values).
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  method: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationLatencyMs: '$context.integration.latency',
  keyId: '$context.authorizer.principalId',
  apiKeyId: '$context.identity.apiKeyId',
  errorType: '$context.error.responseType',
  wafStatus: '$context.waf.status',
  xrayTraceId: '$context.xrayTraceId',
} as const;

/**
 * The access-log format, with constant fields after the variables: the stage's metric dimensions (`service`,
 * `stage`), so that metric filters on the log publish under the exact dimension set the functions' metrics carry
 * (gateway-refusals.ts), which CloudWatch Logs can only take from fields of the line. Literal text, not variables:
 * nothing a client sends, and only characters that can neither start a `$context` variable nor break the JSON.
 */
export function accessLogFormat(constants: Readonly<Record<string, string>> = {}): AccessLogFormat {
  for (const [name, value] of Object.entries(constants)) {
    if (name in ACCESS_LOG_FIELDS) throw new Error(`access log: constant ${name} would replace a field`);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(value)) throw new Error(`access log: constant ${name} is not a plain word`);
  }
  return AccessLogFormat.custom(JSON.stringify({ ...ACCESS_LOG_FIELDS, ...constants }));
}

export const ACCESS_LOG = accessLogFormat();

/**
 * TLS 1.2 or later on the API's own execute-api endpoint (the default for a Regional API is TLS_1_0): the legacy
 * `TLS_1_2` policy, which takes TLS 1.2 and 1.3 and needs no endpoint access mode (the enhanced `SecurityPolicy_*`
 * ones would, and STRICT mode refuses requests whose SNI is not the API's own host). The custom domain has its own.
 */
export const API_SECURITY_POLICY = 'TLS_1_2';
