import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  ApiKeySourceType,
  AuthorizationType,
  CfnDocumentationPart,
  CfnRestApi,
  Cors,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { executionLogGroup, ownedLogGroup } from './owned-log-group.ts';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';
import {
  METHOD_NOT_ALLOWED_CONTENT_TYPES,
  MOCK_REQUEST_TEMPLATE,
  methodNotAllowed,
} from '../../contract/gateway-responses.ts';
import { BASE_PATH, ROUTES, resourcePaths, type Route } from '../../contract/routes.ts';
import type { CustomDomain } from '../config/stages.ts';
import { BEARER_VALIDATION_EXPRESSION } from '../../contract/auth.ts';
import { SPENT_DENY_CUTOFF_SECONDS } from '../../contract/deny-context.ts';
import { staticHeaders } from './literal.ts';
import { pinLogicalId } from './logical-ids.ts';
import { API_SECURITY_POLICY, accessLogFormat } from './api-edge.ts';

/** The deployment stage: both base addresses end in `/v1` (spec section 9). */
export const STAGE_NAME = BASE_PATH.slice(1);

export interface StoreApiProps {
  /** The function serving each route, by operationId (every route of ROUTES needs one). */
  readonly handlers: ReadonlyMap<string, IFunction>;
  /** The TOKEN authorizer's function. */
  readonly authorizerHandler: IFunction;
  /** Authorizer result cache TTL. @default Duration.seconds(60) */
  readonly authorizerCacheTtl?: Duration;
  /** @default RetentionDays.ONE_MONTH */
  readonly accessLogRetention?: RetentionDays;
  /** Of the execution log group (LoggingLevel ERROR: errors only). @default RetentionDays.ONE_MONTH */
  readonly executionLogRetention?: RetentionDays;
  /** Of the access and execution log groups. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** @default - no custom domain */
  readonly customDomain?: CustomDomain;
  /** @default - no CORS */
  readonly corsAllowedOrigins?: readonly string[];
  /** Stage-wide throttle (all methods, all callers together). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Share of requests traced beyond one per second (X-Ray sampling rule on this stage, 0–1). */
  readonly traceSampleRate: number;
  /**
   * Constant fields every access-log line carries (accessLogFormat): the functions' metric dimensions, which metric
   * filters on the log publish under. @default - none
   */
  readonly accessLogConstants?: Readonly<Record<string, string>>;
}

/**
 * The REST API: stage `v1` with a stage-wide throttle, the TOKEN authorizer (API keys come from it:
 * apiKeySourceType AUTHORIZER), one Lambda proxy method per route, a MOCK `ANY` method per resource answering 405
 * with `Allow`, JSON access logs, sampled X-Ray tracing, the deprecation flag of deprecated routes, and an optional
 * custom domain mapped at `v1`. The account-wide CloudWatch role API Gateway logs with is not created here (it is
 * one per account and Region: lib/stacks/account-settings-stack.ts).
 */
export class StoreApi extends Construct {
  readonly api: RestApi;
  readonly authorizer: TokenAuthorizer;
  /** The JSON access log (one line per request, with the caller's key id). */
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: StoreApiProps) {
    super(scope, id);
    const accessLogs = ownedLogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention,
      removalPolicy: props.removalPolicy,
    });
    this.accessLogs = accessLogs;
    const origins = props.corsAllowedOrigins ?? [];
    this.api = new RestApi(this, 'Api', {
      // Also the ApiName dimension of the API's metrics: unique per stage, so alarms of two stages never mix.
      restApiName: Stack.of(this).stackName,
      description: 'Animal Store API',
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // AWS::ApiGateway::Account is account-wide: a stack that sets it overwrites whatever role the account had,
      // and both stages would fight over it. The AnimalStore-account stack owns it.
      cloudWatchRole: false,
      deployOptions: {
        stageName: STAGE_NAME,
        // Every method (`/*/*`), all callers together: the cap on what a flood of random bearer tokens can make
        // the authorizer do. Shared by every key, so sized above each usage plan's per-key bucket.
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(props.accessLogConstants),
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
      ...(origins.length
        ? {
            defaultCorsPreflightOptions: {
              allowOrigins: [...origins],
              allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key'],
              allowMethods: Cors.ALL_METHODS,
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });

    pinLogicalId(this.api, 'RestApi');
    (this.api.node.defaultChild as CfnRestApi).securityPolicy = API_SECURITY_POLICY;
    pinLogicalId(this.api.deploymentStage, 'ApiStage');
    pinLogicalId(accessLogs, 'ApiAccessLogs');
    // The group LoggingLevel ERROR writes to, the stack's own (with a retention), created before the stage.
    executionLogGroup(this, this.api, {
      stageName: STAGE_NAME,
      retention: props.executionLogRetention,
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in each function by the zod schemas shared with the local gateway, which answer 400 with the spec Error object and field details; a gateway validator would duplicate the rules and answer differently.',
    });

    // X-Ray's default rule records the first request each second and 5 % of the rest, in every API of the account.
    // This rule (higher priority) sets this stage's rate; the functions trace only what the stage sampled.
    const stack = Stack.of(this);
    new CfnSamplingRule(this, 'TraceSampling', {
      samplingRule: {
        ruleName: stack.stackName.slice(0, 32),
        priority: 100,
        fixedRate: props.traceSampleRate,
        reservoirSize: 1,
        // API Gateway's service name in X-Ray is "<api name>/<stage>".
        serviceName: `${stack.stackName}/${STAGE_NAME}`,
        serviceType: 'AWS::ApiGateway::Stage',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        version: 1,
      },
    });

    const authorizerCacheTtl = props.authorizerCacheTtl ?? Duration.seconds(60);
    // A spent day's cached Deny must end before the day does (SPENT_DENY_CUTOFF_SECONDS).
    if (authorizerCacheTtl.toSeconds() >= SPENT_DENY_CUTOFF_SECONDS)
      throw new Error(`authorizerCacheTtl must be under ${SPENT_DENY_CUTOFF_SECONDS} s (SPENT_DENY_CUTOFF_SECONDS)`);
    this.authorizer = new TokenAuthorizer(this, 'KeyAuthorizer', {
      handler: props.authorizerHandler,
      identitySource: IdentitySource.header('Authorization'),
      validationRegex: BEARER_VALIDATION_EXPRESSION,
      resultsCacheTtl: authorizerCacheTtl,
    });

    for (const route of ROUTES) this.addRoute(route, props.handlers);
    for (const [path, methods] of resourcePaths()) this.addMethodNotAllowed(path, methods);

    if (props.customDomain) {
      this.api.addDomainName('Domain', {
        domainName: props.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.customDomain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
        basePath: STAGE_NAME,
      });
    }
  }

  private addRoute(route: Route, handlers: ReadonlyMap<string, IFunction>): void {
    const handler = handlers.get(route.operationId);
    if (!handler) throw new Error(`No function for route ${route.operationId}`);
    const deprecationHeaders = route.deprecation
      ? {
          'method.response.header.Deprecation': true,
          'method.response.header.Sunset': true,
          'method.response.header.Link': true,
        }
      : undefined;
    const method = this.api.root
      .resourceForPath(route.path)
      .addMethod(route.method, new LambdaIntegration(handler, { proxy: true, allowTestInvoke: false }), {
        operationName: route.operationId,
        authorizer: this.authorizer,
        authorizationType: AuthorizationType.CUSTOM,
        apiKeyRequired: true,
        ...(deprecationHeaders
          ? {
              methodResponses: [
                { statusCode: String(route.success?.status ?? 200), responseParameters: deprecationHeaders },
              ],
            }
          : {}),
      });
    Validations.of(method).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Clients are API-key holders (spec: HTTP bearer API key), not Cognito users: the Lambda TOKEN authorizer authenticates every operation against the keys table.',
    });
    if (route.deprecation) {
      // The API definition's deprecation flag (exported as OpenAPI `deprecated: true` with the documentation).
      new CfnDocumentationPart(this, `Deprecated-${route.operationId}`, {
        restApiId: this.api.restApiId,
        location: { type: 'METHOD', path: route.path, method: route.method },
        properties: JSON.stringify({
          summary: route.summary,
          deprecated: true,
          'x-sunset': route.deprecation.sunsetAt,
          'x-successor': `${BASE_PATH}${route.deprecation.successor}`,
        }),
      });
    }
  }

  /** API Gateway has no 405: an `ANY` MOCK method answers every method a resource does not define. */
  private addMethodNotAllowed(path: string, methods: readonly string[]): void {
    const answer = methodNotAllowed(methods);
    const header = 'method.response.header.';
    const method = this.api.root.resourceForPath(path).addMethod(
      'ANY',
      new MockIntegration({
        // NEVER: a body is never passed to the mock (it would answer 500); unmapped types get 415 instead.
        passthroughBehavior: PassthroughBehavior.NEVER,
        requestTemplates: Object.fromEntries(METHOD_NOT_ALLOWED_CONTENT_TYPES.map((t) => [t, MOCK_REQUEST_TEMPLATE])),
        // The default integration response (no selection pattern) turns whatever the mock returns into the 405.
        integrationResponses: [
          {
            statusCode: String(answer.status),
            responseParameters: staticHeaders(answer.headers, header),
            responseTemplates: { 'application/json': answer.body },
          },
        ],
      }),
      {
        operationName: `methodNotAllowed${path.replace(/[^A-Za-z0-9]/g, '_')}`,
        authorizationType: AuthorizationType.NONE,
        apiKeyRequired: false,
        methodResponses: [
          {
            statusCode: String(answer.status),
            responseParameters: Object.fromEntries(Object.keys(answer.headers).map((h) => [`${header}${h}`, true])),
          },
        ],
      },
    );
    Validations.of(method).acknowledge(
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'The MOCK ANY method only answers 405 with a static body and invokes no backend; like the local gateway it answers before authentication.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The MOCK ANY method only answers 405 with a static body and invokes no backend; like the local gateway it answers before authentication.',
      },
    );
  }
}
