/**
 * Per-stage deployment settings: one typed, read-only record per stage. The CDK app builds one stack per entry.
 * Account and region are pinned only on purpose: context (`-c animal-store:<stage>:account=…`, `…:region=…`) or
 * `account`/`region` here. Otherwise the stack is environment-agnostic (region and account are CloudFormation's
 * AWS::Region / AWS::AccountId, resolved where it is deployed). CDK_DEFAULT_REGION is deliberately not read: the
 * CDK CLI sets it to us-east-1 when no region is configured, which would bake us-east-1 into every ARN and URL.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { LambdaDeploymentConfig, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StageName } from './stage-names.ts';

export { STAGE_NAMES, type StageName } from './stage-names.ts';

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

/**
 * Who hears the alarms. Every alarm of a stage notifies one SNS topic on ALARM and on OK. Also settable without
 * editing this file: context `animal-store:<stage>:alarmEmails=a@x.example,b@x.example` and
 * `animal-store:<stage>:alarmTopicArn=arn:…` (context wins).
 */
export interface AlarmNotifications {
  /** E-mail addresses subscribed to the stage's topic (each confirms once by mail). @default - none */
  readonly emails?: readonly string[];
  /**
   * An existing topic (e.g. a team's shared topic wired to chat or paging) used instead of creating one; `emails`
   * are then ignored: subscribe them to that topic.
   * @default - the stack creates the stage's topic
   */
  readonly topicArn?: string;
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
  /** LOG_LEVEL of every function. */
  readonly logLevel: LogLevel;
  /** Retention of function logs and API access logs. */
  readonly logRetention: RetentionDays;
  readonly alarms: AlarmThresholds;
  /** Who the stage's alarm topic notifies. An empty record keeps the stage quiet (the topic has no subscriber). */
  readonly alarmNotifications: AlarmNotifications;
  /**
   * How CodeDeploy shifts traffic to a new version of each function's `live` alias; every shift is gated on the
   * stage's deploy alarms and rolls back when one fires.
   * @default - all at once: CloudFormation points the alias at the new version directly (no CodeDeploy)
   */
  readonly deploymentConfig?: ILambdaDeploymentConfig;
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
    // Quiet by default: the topic exists and every alarm uses it, but nobody is subscribed.
    alarmNotifications: {},
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
    // Subscribers come from context (see AlarmNotifications); synth warns while production's topic has none.
    alarmNotifications: {},
    deploymentConfig: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    corsAllowedOrigins: [],
    authorizerCacheTtl: Duration.seconds(60),
  },
};

/** A stage's alarm notifications with the context overrides applied (context wins over STAGES). */
export function alarmNotificationsOf(stage: StageConfig, context: (key: string) => unknown): AlarmNotifications {
  const emails = context(`animal-store:${stage.name}:alarmEmails`);
  const topicArn = context(`animal-store:${stage.name}:alarmTopicArn`);
  return {
    emails:
      typeof emails === 'string'
        ? emails
            .split(',')
            .map((e) => e.trim())
            .filter(Boolean)
        : stage.alarmNotifications.emails,
    topicArn: typeof topicArn === 'string' && topicArn ? topicArn : stage.alarmNotifications.topicArn,
  };
}
