/**
 * Per-stage deployment settings: one typed, read-only record per stage. The CDK app builds one stack per entry.
 * Account and region are pinned only on purpose: context (`-c animal-store:<stage>:account=…`, `…:region=…`) or
 * `account`/`region` here. Otherwise the stack is environment-agnostic (region and account are CloudFormation's
 * AWS::Region / AWS::AccountId, resolved where it is deployed). CDK_DEFAULT_REGION is deliberately not read: the
 * CDK CLI sets it to us-east-1 when no region is configured, which would bake us-east-1 into every ARN and URL.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

export const STAGE_NAMES = ['staging', 'production'] as const;
export type StageName = (typeof STAGE_NAMES)[number];

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export interface AlarmThresholds {
  /** API 5xx responses as a percentage of all requests, over 5 minutes. */
  readonly serverErrorRatePercent: number;
  /** API p99 latency (ms), over 5 minutes. */
  readonly p99LatencyMs: number;
  /** Lambda errors per function, over 5 minutes. */
  readonly lambdaErrors: number;
  /** Throttled requests (Lambda throttles per function, DynamoDB throttled requests per table), over 5 minutes. */
  readonly throttles: number;
  /** DynamoDB system errors per table, and app-side storage failures (StorageUnavailable), over 5 minutes. */
  readonly storageErrors: number;
}

export interface CustomDomain {
  /** e.g. `api.animal-store.example`. */
  readonly domainName: string;
  /** A regional ACM certificate for domainName, in the stage's region. */
  readonly certificateArn: string;
}

export interface StageConfig {
  readonly name: StageName;
  /** The CloudFormation stack name; `npx cdk deploy <stackName>`. */
  readonly stackName: string;
  /** @default - environment-agnostic: the account `cdk deploy` deploys to */
  readonly account?: string;
  /** @default - environment-agnostic: the region `cdk deploy` deploys to (AWS_REGION / profile) */
  readonly region?: string;
  /** POWERTOOLS_LOG_LEVEL of every function. */
  readonly logLevel: LogLevel;
  /** Retention of function logs and API access logs. */
  readonly logRetention: RetentionDays;
  readonly alarms: AlarmThresholds;
  /** SNS topic that alarms notify. @default - alarms have no action (visible in the console only) */
  readonly alarmTopicArn?: string;
  /** What happens to tables, the cursor secret and log groups when the stack (or resource) is deleted. */
  readonly removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection (production only). */
  readonly deletionProtection: boolean;
  /** Custom domain with base path mapping `v1`. @default - only the execute-api address */
  readonly customDomain?: CustomDomain;
  /** Browser origins allowed by CORS. Empty: no CORS preflight methods (server-to-server clients only). */
  readonly corsAllowedOrigins: readonly string[];
  /**
   * TOKEN authorizer result cache TTL. A revoked or banned key keeps working for up to this long on API Gateway
   * nodes that cached it; Duration.seconds(0) disables the cache (one keys-table read per request).
   */
  readonly authorizerCacheTtl: Duration;
}

export const STAGES: Readonly<Record<StageName, StageConfig>> = {
  staging: {
    name: 'staging',
    stackName: 'AnimalStore-staging',
    logLevel: 'DEBUG',
    logRetention: RetentionDays.TWO_WEEKS,
    alarms: { serverErrorRatePercent: 5, p99LatencyMs: 3_000, lambdaErrors: 10, throttles: 10, storageErrors: 10 },
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    corsAllowedOrigins: [],
    authorizerCacheTtl: Duration.seconds(60),
  },
  production: {
    name: 'production',
    stackName: 'AnimalStore-production',
    logLevel: 'INFO',
    logRetention: RetentionDays.ONE_YEAR,
    alarms: { serverErrorRatePercent: 1, p99LatencyMs: 1_000, lambdaErrors: 1, throttles: 1, storageErrors: 1 },
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    corsAllowedOrigins: [],
    authorizerCacheTtl: Duration.seconds(60),
  },
};
