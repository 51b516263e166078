import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { servicePrincipalOf } from './service-principal.ts';
import { Alias, Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { pinLogicalId } from './logical-ids.ts';
import { ownedLogGroup } from './owned-log-group.ts';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { BUNDLING } from '../config/bundling.ts';
import { FUNCTION_RUNTIME } from '../config/function-runtime.ts';
import type { LogLevel } from '../config/stages.ts';
import { LIVE_ALIAS } from '../../contract/aliases.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Telemetry settings of every function: the service name is also the `service` dimension of custom metrics. */
export const TELEMETRY = { serviceName: 'animal-store', metricsNamespace: 'AnimalStore' } as const;

export { LIVE_ALIAS } from '../../contract/aliases.ts';

/**
 * The logical ids the deployed stacks hold for the `live` aliases, by the function's construct id. They are CDK's
 * hashes of each alias's construct path from the first deploys, written out here so that no refactor of the
 * construct tree moves them: `live` is a fixed name on its function, and under a new logical id CloudFormation
 * creates a second `live` before deleting the first, fails, and rolls back (a release that pinned them to
 * `<Function>LiveAlias` could not be deployed, nor undone by deploying the commit before it).
 * test/infra/released-template.test.ts checks them against the last release's templates.
 */
export const DEPLOYED_LIVE_ALIAS_IDS: Readonly<Record<string, string>> = {
  ListPets: 'ListPetsLiveB612E50C',
  CreatePet: 'CreatePetLiveE7742E5B',
  GetPet: 'GetPetLive19A9A76E',
  ListOrders: 'ListOrdersLiveDB1F61CC',
  Authorizer: 'AuthorizerLive48A43D50',
};

/**
 * The pinned logical id of the `live` alias of the function built under construct id `id`: the deployed one, or,
 * for a function no release has deployed yet, `<id>LiveAlias`, which stays its id once released.
 */
export const liveAliasLogicalId = (id: string): string => DEPLOYED_LIVE_ALIAS_IDS[id] ?? `${id}LiveAlias`;

export interface ApiFunctionProps {
  /** The Lambda entry module (absolute path; lib/config/lambda-entries.ts writes it); it exports `handler`. */
  readonly entry: string;
  /** Used for the description, the metrics' service dimension and construct ids. */
  readonly operationId: string;
  /** Stage name, passed as STAGE. */
  readonly stage: string;
  /** Extra environment (table names, secrets). @default - none */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default 'INFO' */
  readonly logLevel?: LogLevel;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Of the log group. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** @default FUNCTION_RUNTIME.memoryMb (lib/config/function-runtime.ts) */
  readonly memorySize?: number;
  /** Well under API Gateway's 29 s integration timeout. @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** Reserved concurrency: both a cap and a guarantee. @default - none (the account's unreserved pool) */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * One Lambda function for one operation (or the authorizer): Node.js 24 on arm64, bundled by the local esbuild
 * with the project's one bundling config, X-Ray tracing, log and metric settings, and its own log group with a
 * retention (no log-retention custom resource). Its role may write to that log group and send traces, nothing
 * else (no AWSLambdaBasicExecutionRole); table grants are added by the caller.
 *
 * Each deploy publishes a version (`currentVersion`: a new one whenever code or configuration changes) and points
 * the `live` alias at it; callers invoke the alias, so a deploy can shift traffic between versions gradually.
 * Versions are kept when a deploy replaces them (CDK's default for `currentVersion` is DESTROY, which deletes the
 * previous version as soon as the new one is live and leaves a manual rollback nothing to point the alias at).
 */
/** How every function of the stack is bundled (esbuild, ESM, the SDK inside: lib/config/bundling.ts). */
export const functionBundling = (): BundlingOptions => ({
  target: BUNDLING.target,
  format: OutputFormat.ESM,
  minify: BUNDLING.minify,
  sourceMap: BUNDLING.sourceMap,
  sourcesContent: BUNDLING.sourcesContent,
  mainFields: [...BUNDLING.mainFields],
  externalModules: [...BUNDLING.externalModules],
  bundleAwsSDK: true,
  banner: BUNDLING.banner,
  forceDockerBundling: false,
});

export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  /** What callers invoke. */
  readonly alias: Alias;
  /** The function's own log group. */
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);
    const logGroup = ownedLogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.logGroup = logGroup;
    const role = new Role(this, 'Role', {
      assumedBy: servicePrincipalOf(this, 'lambda.amazonaws.com'),
      description: `Animal Store ${props.stage}: ${props.operationId}`,
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    this.function = new NodejsFunction(this, 'Function', {
      role,
      entry: props.entry,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      handler: 'handler',
      description: `Animal Store ${props.stage}: ${props.operationId}`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? FUNCTION_RUNTIME.memoryMb,
      timeout: props.timeout ?? Duration.seconds(10),
      // PASS_THROUGH: a function records a trace only when the request arrived sampled (the stage's X-Ray sampling
      // rule decides); ACTIVE would also sample, at Lambda's own rate, invocations that arrive without a decision.
      tracing: Tracing.PASS_THROUGH,
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      // RetainExceptOnCreate: kept on update and delete (the rollback target), dropped only when the operation that
      // created it rolls back (it was never live).
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE },
      logGroup,
      awsSdkConnectionReuse: false,
      environment: {
        STAGE: props.stage,
        NODE_OPTIONS: FUNCTION_RUNTIME.nodeOptions,
        SERVICE_NAME: TELEMETRY.serviceName,
        LOG_LEVEL: props.logLevel ?? 'INFO',
        METRICS_NAMESPACE: TELEMETRY.metricsNamespace,
        ...props.environment,
      },
      bundling: functionBundling(),
    });
    // Lambda makes the function depend on its role and the role's policy; the role is already a dependency through
    // the function's Role property, and the template linter flags the repeat (W3005). Only the policy, which nothing
    // else orders before the function, stays: table grants must be attached before the function is first invoked.
    const fnResource = this.function.node.defaultChild as CfnResource;
    const policy = role.node.findChild('DefaultPolicy').node.defaultChild as CfnResource;
    fnResource.addOverride('DependsOn', [Stack.of(this).getLogicalId(policy)]);
    // Old versions stay (currentVersionOptions above): a rollback points the alias back at one.
    this.alias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.function.currentVersion });
    // The alias has a fixed name on its function: under a new logical id (a construct moved or renamed)
    // CloudFormation would create a second `live` before deleting the first, and fail. Pinned to the id the
    // deployed stacks hold (DEPLOYED_LIVE_ALIAS_IDS).
    pinLogicalId(this.alias, liveAliasLogicalId(id));
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray tracing (Tracing.PASS_THROUGH): xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so AWS requires Resource "*".',
    });
  }
}
