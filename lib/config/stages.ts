/**
 * Per-stage deployment settings: one typed, read-only record per stage. The CDK app builds one stack per entry.
 * Account and region are pinned only on purpose: context (`-c animal-store:<stage>:account=…`, `…:region=…`) or
 * `account`/`region` here. Otherwise the stack is environment-agnostic (region and account are CloudFormation's
 * AWS::Region / AWS::AccountId, resolved where it is deployed). CDK_DEFAULT_REGION is deliberately not read: the
 * CDK CLI sets it to us-east-1 when no region is configured, which would bake us-east-1 into every ARN and URL.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { LambdaDeploymentConfig, TrafficRouting, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StageName } from './stage-names.ts';
import { DEFAULT_ACCOUNT_QUOTAS, edgeFor, type AccountQuotas } from './capacity.ts';
import { DEFAULT_FREE_SHARE } from '../../contract/plans.ts';

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
  /** The authorizer's throttled invocations, percent of its invocations and throttles, over 5 minutes. */
  readonly authorizerThrottleRatePercent: number;
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
  /** Retention of the functions' logs (debugging: metrics outlive them anyway). */
  readonly logRetention: RetentionDays;
  readonly alarms: AlarmThresholds;
  /** Who the stage's alarm topic notifies. An empty record keeps the stage quiet (the topic has no subscriber). */
  readonly alarmNotifications: AlarmNotifications;
  /**
   * How CodeDeploy shifts traffic to a new version of each function's `live` alias; every shift is gated on the
   * stage's deploy alarms and rolls back when one fires. A predefined config, or a TrafficRouting for which the
   * stack creates a custom config. The new version must serve long enough for every gate alarm to fire
   * (`npm run preflight` and test/infra/deploy-lifecycle.test.ts check it on the template).
   * Context `animal-store:breakGlass="<reason>"` replaces it with all-at-once, no check and no gate for one deploy.
   */
  readonly deploymentConfig: ILambdaDeploymentConfig | TrafficRouting;
  /**
   * What happens to tables, the cursor secret and log groups when the stack (or resource) is deleted.
   * RETAIN_ON_UPDATE_OR_DELETE (CloudFormation's RetainExceptOnCreate) keeps them like RETAIN, except when the
   * stack operation that created them rolls back: a failed first deploy leaves no empty tables or keys behind
   * (deletion protection is off on a first deploy so that rollback can delete them: lib/stacks/first-deploy.ts).
   */
  readonly removalPolicy: RemovalPolicy;
  /**
   * CloudFormation termination protection: `cdk destroy` and DeleteStack are refused until it is turned off. Off on
   * a first deploy (`-c animal-store:<stage>:firstDeploy=true`), so a failed create can be deleted and retried.
   */
  readonly terminationProtection: boolean;
  /**
   * Refuse to synthesize without `-c animal-store:<stage>:account=…` (or `account` above): a shell pointed at
   * another account must not be able to deploy this stage there.
   */
  readonly requireAccount: boolean;
  /**
   * Refuse to synthesize while nobody would hear the alarms (no e-mail and no existing topic); otherwise a warning.
   */
  readonly requireAlarmSubscriber: boolean;
  /** Refuse break glass without a reason (`-c animal-store:breakGlass="<reason>"`, lib/stacks/break-glass.ts). */
  readonly breakGlassNeedsReason: boolean;
  /**
   * The account quotas the stage is deployed under (API Gateway's throttle, Lambda's concurrency, DynamoDB's
   * per-table throughput): AWS's defaults unless raised. The edge below is sized from them (capacity.ts edgeFor), and
   * `npm run capacity` names the increases the customer mix we sell needs. Context
   * `animal-store:<stage>:lambdaConcurrency=N` (and `apiRate`, `apiBurst`, `tableUnits`) says an increase was granted.
   */
  readonly accountQuotas: AccountQuotas;
  /**
   * The stage's share of the account's quotas (0 to 1; context `animal-store:<stage>:accountShare`): its rate, bucket
   * and Lambda concurrency are that share of the account's. Default 1: each stage in an account of its own, as AWS's
   * multi-account guidance has it, so a staging load test cannot reach production. Stages sharing an account give
   * shares that add up to at most 1 (`npm run preflight` refuses more).
   */
  readonly accountShare: number;
  /**
   * Throttle of the REST API stage, which AWS applies to each method separately (all callers of a method together,
   * authenticated or not), before the authorizer: the stage's rate split evenly over its methods, and the largest
   * bucket the stage's Lambda concurrency holds through the authorizer and a function at once (edgeFor), so a burst
   * past it gets the gateway's 429 with Retry-After, never a 5xx.
   */
  readonly stageThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * WAF rate-based rule per client IP over every request from an address not on `customerEgress`: the largest
   * contract of a plan with fixed limits (edgeFor). A flood from one address, forged tokens or not, is blocked there.
   */
  readonly wafRequestsPerIpPer5Minutes: number;
  /**
   * WAF rate-based rule keyed on the Authorization header, from addresses not on `customerEgress`: requests one key
   * may send in any 5-minute window from any number of addresses (the same figure). A banned or spent key holds no more.
   */
  readonly wafRequestsPerKeyPer5Minutes: number;
  /** WAF rate-based rule per listed address: the largest contract the admin tool sells (MAX_CUSTOM_LIMITS). */
  readonly wafListedRequestsPer5Minutes: number;
  /**
   * Customers' egress addresses (CIDR, IPv4) that send more than one Business key's contract: context
   * `animal-store:<stage>:customerEgress=203.0.113.7/32,198.51.100.0/24`. WAF's IP set; empty by default.
   */
  readonly customerEgress: readonly string[];
  /**
   * The share of the stage throttle the Free plan's usage plan gets (0 to 1; context `animal-store:<stage>:freeShare`):
   * however many Free keys send at their full contract, paying keys keep the rest (capacity.ts planThrottles).
   */
  readonly freeShare: number;
  /**
   * Reserved concurrency of the authorizer: its cap (a flood of random tokens cannot take more, so the functions keep
   * the rest) and its guarantee, sized to every method's stage bucket of uncached tokens at once (edgeFor).
   */
  readonly authorizerReservedConcurrency: number;
  /** Retention of the API access logs (who called what: kept longer than function logs). */
  readonly accessLogRetention: RetentionDays;
  /** Share of requests X-Ray records beyond the first one each second (0–1), through a sampling rule on the stage. */
  readonly traceSampleRate: number;
  /** DynamoDB deletion protection (production only), from the deploy after the first (lib/stacks/first-deploy.ts). */
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

/** The stage's edge figures, sized from the account quotas it is deployed under and its share (capacity.ts). */
function edgeOf(quotas: AccountQuotas, accountShare = 1) {
  const edge = edgeFor(quotas, accountShare);
  return {
    accountQuotas: quotas,
    accountShare,
    stageThrottle: edge.stageThrottle,
    authorizerReservedConcurrency: edge.authorizerReservedConcurrency,
    wafRequestsPerIpPer5Minutes: edge.wafRequestsPerIpPer5Minutes,
    wafRequestsPerKeyPer5Minutes: edge.wafRequestsPerKeyPer5Minutes,
    wafListedRequestsPer5Minutes: edge.wafListedRequestsPer5Minutes,
  };
}

export const STAGES: Readonly<Record<StageName, StageConfig>> = {
  staging: {
    name: 'staging',
    stackName: 'AnimalStore-staging',
    logLevel: 'DEBUG',
    logRetention: RetentionDays.ONE_WEEK,
    accessLogRetention: RetentionDays.TWO_WEEKS,
    alarms: {
      serverErrorRatePercent: 5,
      p99LatencyMs: 3_000,
      lambdaErrors: 10,
      throttles: 10,
      storageErrors: 10,
      authorizerThrottleRatePercent: 5,
    },
    // Quiet by default: the topic exists and every alarm uses it, but nobody is subscribed (synth warns).
    alarmNotifications: {},
    // Staging exercises the same CodeDeploy shifting and gates as production before production depends on them, and
    // for as long: a gate judging 3-minute periods can first fire 8 minutes into the shift (the period the shift
    // starts in, one full period, CloudWatch's 2-minute delay: lib/preflight/canary-timing.ts), so the 10-minute
    // canary (the next predefined one after 5) is the shortest that leaves a margin. It proves the rollback only with
    // traffic (docs/deployment.md, "Proving the rollback").
    deploymentConfig: LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    terminationProtection: false,
    requireAccount: false,
    requireAlarmSubscriber: false,
    breakGlassNeedsReason: false,
    ...edgeOf(DEFAULT_ACCOUNT_QUOTAS),
    freeShare: DEFAULT_FREE_SHARE,
    customerEgress: [],
    traceSampleRate: 0.05,
    corsAllowedOrigins: [],
    authorizerCacheTtl: Duration.seconds(60),
  },
  production: {
    name: 'production',
    stackName: 'AnimalStore-production',
    logLevel: 'INFO',
    logRetention: RetentionDays.ONE_MONTH,
    accessLogRetention: RetentionDays.ONE_YEAR,
    alarms: {
      serverErrorRatePercent: 1,
      p99LatencyMs: 1_000,
      lambdaErrors: 1,
      throttles: 1,
      storageErrors: 1,
      authorizerThrottleRatePercent: 1,
    },
    // Subscribers come from context (see AlarmNotifications); synth refuses production while it has none.
    alarmNotifications: {},
    // As staging's, for the same reason: every gate fires, with a margin, before the shift completes.
    deploymentConfig: LambdaDeploymentConfig.CANARY_10PERCENT_10MINUTES,
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    deletionProtection: true,
    terminationProtection: true,
    requireAccount: true,
    requireAlarmSubscriber: true,
    breakGlassNeedsReason: true,
    ...edgeOf(DEFAULT_ACCOUNT_QUOTAS),
    freeShare: DEFAULT_FREE_SHARE,
    customerEgress: [],
    traceSampleRate: 0.01,
    corsAllowedOrigins: [],
    authorizerCacheTtl: Duration.seconds(60),
  },
};

/** A comma-separated context value's entries, trimmed, empty ones dropped; undefined when it is not a string. */
const listOf = (v: unknown): string[] | undefined =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean)
    : undefined;

/** A stage's alarm notifications with the context overrides applied (context wins over STAGES). */
export function alarmNotificationsOf(stage: StageConfig, context: (key: string) => unknown): AlarmNotifications {
  const emails = context(`animal-store:${stage.name}:alarmEmails`);
  const topicArn = context(`animal-store:${stage.name}:alarmTopicArn`);
  return {
    emails: listOf(emails) ?? stage.alarmNotifications.emails,
    topicArn: typeof topicArn === 'string' && topicArn ? topicArn : stage.alarmNotifications.topicArn,
  };
}

const QUOTA_NAMES = ['apiRate', 'apiBurst', 'lambdaConcurrency', 'tableUnits'] as const;

/** A share given by context: a number above 0 and at most 1. */
const shareOf = (v: unknown): number | undefined => {
  const n = Number(v);
  return v !== undefined && v !== '' && n > 0 && n <= 1 ? n : undefined;
};

/**
 * An IPv4 address or CIDR block of /16 or smaller, octets without leading zeros: WAF's IP sets refuse /0, and a
 * larger block would give much of a network the largest contract.
 */
const CIDR = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\/(3[0-2]|[12]\d)$/;
const MIN_PREFIX = 16;
const isCidr = (e: string) => CIDR.test(e) && Number(e.split('/')[1]) >= MIN_PREFIX;

/** Customers' egress addresses given by context, each with its prefix length (`/32` added to a bare address). */
const egressOf = (v: unknown): string[] | undefined => listOf(v)?.map((e) => (e.includes('/') ? e : `${e}/32`));

/**
 * The stage with what context says: account quotas that were raised (`-c animal-store:<stage>:lambdaConcurrency=10000`,
 * …) and the stage's share of the account, its edge sized again from them; the Free share; the customers' egress
 * addresses. Unchanged without such context. A value out of range is reported by contextProblems and ignored here.
 */
export function withAccountQuotas(stage: StageConfig, context: (key: string) => unknown): StageConfig {
  const share = shareOf(context(`animal-store:${stage.name}:freeShare`));
  if (share !== undefined) stage = { ...stage, freeShare: share };
  const egress = egressOf(context(`animal-store:${stage.name}:customerEgress`));
  if (egress && egress.every(isCidr)) stage = { ...stage, customerEgress: egress };
  const accountShare = shareOf(context(`animal-store:${stage.name}:accountShare`));
  const given = Object.fromEntries(
    QUOTA_NAMES.flatMap((n) => {
      const v = Number(context(`animal-store:${stage.name}:${n}`));
      return Number.isInteger(v) && v > 0 ? [[n, v]] : [];
    }),
  );
  if (Object.keys(given).length === 0 && accountShare === undefined) return stage;
  return { ...stage, ...edgeOf({ ...stage.accountQuotas, ...given }, accountShare ?? stage.accountShare) };
}

/** The context key naming an existing table for a table definition: `animal-store:<stage>:petsTableName`, … */
export const existingTableContextKey = (stage: StageName, defId: string): string =>
  `animal-store:${stage}:${defId[0]!.toLowerCase()}${defId.slice(1)}TableName`;

/**
 * Existing tables to use instead of creating them, by definition id, from context (e.g. a point-in-time restore:
 * `-c animal-store:production:petsTableName=<restored table>`; docs/deployment.md, "Restoring a table").
 */
export function existingTableNamesOf(
  stage: StageConfig,
  defIds: readonly string[],
  context: (key: string) => unknown,
): Record<string, string> {
  return Object.fromEntries(
    defIds.flatMap((id) => {
      const name = context(existingTableContextKey(stage.name, id));
      return typeof name === 'string' && name ? [[id, name]] : [];
    }),
  );
}

/**
 * What is wrong with a stage's `-c` values, one line each: an account that is not a 12-digit id, a Region that is
 * not one, an alarm e-mail that is not an address, a topic that is not an SNS topic ARN. Each would otherwise pass
 * synth and fail the deploy (or, for an e-mail, never deliver a notification while the stack looks subscribed).
 */
export function contextProblems(stage: StageName, context: (key: string) => unknown): string[] {
  const problems: string[] = [];
  const value = (name: string): string | undefined => {
    const v = context(`animal-store:${stage}:${name}`);
    return v === undefined ? undefined : String(v);
  };
  const check = (name: string, ok: (v: string) => boolean, what: string) => {
    const v = value(name);
    if (v !== undefined && !ok(v))
      problems.push(`-c animal-store:${stage}:${name}=${JSON.stringify(v).slice(0, 80)} is not ${what}`);
  };
  check('account', (v) => /^\d{12}$/.test(v), 'an AWS account id (12 digits)');
  for (const n of QUOTA_NAMES) check(n, (v) => /^[1-9]\d*$/.test(v), 'a positive whole number (a granted quota)');
  check('freeShare', (v) => shareOf(v) !== undefined, 'a share above 0 and at most 1 (e.g. 0.5)');
  check('accountShare', (v) => shareOf(v) !== undefined, 'a share above 0 and at most 1 (e.g. 0.2)');
  const egress = egressOf(value('customerEgress'));
  for (const e of egress ?? [])
    if (!isCidr(e))
      problems.push(
        `-c animal-store:${stage}:customerEgress: ${JSON.stringify(e).slice(0, 80)} is not an IPv4 CIDR block of /${MIN_PREFIX} or smaller`,
      );
  check('region', (v) => /^[a-z]{2}(-[a-z]+)+-\d$/.test(v), 'an AWS Region (e.g. eu-west-1)');
  const email = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;
  const emails = value('alarmEmails');
  if (emails !== undefined)
    for (const e of emails.split(',').map((x) => x.trim()))
      if (!email.test(e))
        problems.push(
          `-c animal-store:${stage}:alarmEmails: ${JSON.stringify(e).slice(0, 80)} is not an e-mail address`,
        );
  check(
    'alarmTopicArn',
    (v) => /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/.test(v),
    'an SNS topic ARN',
  );
  return problems;
}
