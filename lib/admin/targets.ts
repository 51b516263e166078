/**
 * The admin tool's real targets: the DynamoDB Local of `npm start` (`--local`), or a deployed stage found through
 * its stack outputs (`--stage`). Tests pass their own dependencies instead (a DepsFactory of their own).
 */
import { AUDIT_TABLE, KEYS_TABLE, STATE_TABLE } from '../../contract/tables.ts';
import type { StageName } from '../config/stage-names.ts';
import { OUTPUT_IDS, USAGE_KEYS_PER_PLAN, tableNameOutputId } from '../stacks/outputs.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import type { PacingOptions } from './pacing.ts';
import { AdminError, type AdminDeps } from './ports.ts';

/** Builds the dependencies for a target; tests pass their own. */
export type DepsFactory = (target: AdminTarget) => Promise<AdminDeps>;

/** Where the command runs, and how API Gateway calls (one command's) say and bound their waits (stderr, --max-wait). */
export interface AdminTarget {
  readonly local: boolean;
  readonly stage?: string;
  readonly pacing?: PacingOptions;
  /** How long and how often the admin's DynamoDB client waits (`--timeout`, `--attempts`). @default ADMIN_DYNAMODB */
  readonly dynamodb?: DynamoDbPatience;
}

/** The admin's DynamoDB client: how long one attempt may take, and how many attempts a call makes. */
export interface DynamoDbPatience {
  /** Per attempt, milliseconds. */
  readonly timeoutMs: number;
  readonly attempts: number;
}

/**
 * The admin's defaults, not the functions' (2 s × 3, bounded by API Gateway's 29 s): a sweep's pages (`keys reindex`'s
 * Scan, a `keys list --limit 1000` page) are the tool's largest reads, and on moto each takes time that grows with the
 * table: at 100,000 keys, `keys list --limit 1000` through every page made 2,112 requests in 25 minutes, the slowest
 * 37.8 s (median 0.2 s; bench/admin-sweep.ts, on a loaded machine). 60 s an attempt outwaits that; 4 attempts ride out
 * a throttle. A dead endpoint is waited on at most about 4 minutes, and `--timeout 5` says so sooner.
 */
export const ADMIN_DYNAMODB: DynamoDbPatience = { timeoutMs: 60_000, attempts: 4 };
/** What `--timeout` (seconds) and `--attempts` accept. */
export const DYNAMODB_LIMITS = { timeoutS: { min: 1, max: 900 }, attempts: { min: 1, max: 20 } } as const;

/**
 * The tables the admin tool uses: key records (keys), limits, usage history and bans (state), the history of changes
 * (audit). It reads the outputs of these only, and its configuration holds these only, so a stack deployed before
 * another table was added (or without one the tool does not touch) still serves it.
 */
export const ADMIN_TABLES = [KEYS_TABLE, STATE_TABLE, AUDIT_TABLE] as const;

/** Where the key records, limits and usage history are: physical table names, and the DynamoDB holding them. */
export interface TableTarget {
  /** ADMIN_TABLES' variables (`KEYS_TABLE_NAME`…), each to its physical name. */
  readonly tableEnv: Readonly<Record<string, string>>;
  /** The tables' region (a deployed stage). @default - none: DynamoDB Local needs no region */
  readonly region?: string;
  /** DynamoDB Local. @default - the region's DynamoDB */
  readonly endpoint?: string;
}

type AwsDeps = Pick<AdminDeps, 'whoami' | 'secrets' | 'controlPlane' | 'ownKeyAuthorizer'>;
type Target = { tables: TableTarget; awsDeps: AwsDeps };

/**
 * The stack outputs `--stage` reads (test/infra checks that both stages' templates have each of them). Read from a
 * stack, the same shape holds their values.
 */
export const ADMIN_OUTPUT_IDS = {
  /** By table variable: `KEYS_TABLE_NAME` → `KeysTableName`. */
  tables: Object.fromEntries(ADMIN_TABLES.map((t) => [t.envVar, tableNameOutputId(t)])) as Record<string, string>,
};

/** Dependencies for the real targets: DynamoDB Local, or a deployed stage found through its stack outputs. */
export const realDeps: DepsFactory = async ({ local, stage, pacing, dynamodb = ADMIN_DYNAMODB }) => {
  const { tables, awsDeps } = local ? await localTarget() : await awsTarget(stage as StageName, pacing);
  return { ...(await storesFor(tables, dynamodb)), stage: stage ?? 'local', ...awsDeps };
};

/** DynamoDB Local of `npm start`: nothing of AWS besides. */
async function localTarget(): Promise<Target> {
  const { localTableEnv } = await import('../../lambdas/storage/provision.ts');
  const names = localTableEnv(process.env.ANIMAL_STORE_TABLE_PREFIX ?? 'animal-store-local');
  return {
    tables: {
      tableEnv: Object.fromEntries(ADMIN_TABLES.map((t) => [t.envVar, names[t.envVar]!])),
      endpoint:
        process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT ||
        `http://127.0.0.1:${process.env.ANIMAL_STORE_DYNAMODB_PORT ?? 8000}`,
    },
    awsDeps: {},
  };
}

/** A deployed stage: its tables from its stack's outputs, every client in one region. */
async function awsTarget(stage: StageName, pacing?: PacingOptions): Promise<Target> {
  const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const { awsCheckKeySecrets } = await import('./secrets.ts');
  const { STAGES } = await import('../config/stages.ts');
  if (!Object.hasOwn(STAGES, stage)) throw new AdminError(`unknown stage "${stage}"`);
  const region = await sdkRegion();
  const { stackName } = STAGES[stage];
  const outputs = await stackOutputs(stackName, region);
  return {
    tables: { tableEnv: outputs.tables, region },
    awsDeps: {
      ownKeyAuthorizer: outputs.usageKeys !== USAGE_KEYS_PER_PLAN,
      whoami: () => callerArn(region),
      // The pre-traffic check key's secret (keys issue-check-key), in the stack's region as the hook reads it.
      secrets: awsCheckKeySecrets(new SecretsManagerClient({ region })),
      // Built when `keys remove-release-api-keys` asks: no other command loads API Gateway's client.
      controlPlane: async () =>
        (await import('./release-api-keys.ts')).awsControlPlane(
          region,
          stackName,
          STAGES[stage].authorizerCacheTtl.toMilliseconds(),
          pacing,
        ),
    },
  };
}

/**
 * The AWS principal the tool's credentials resolve to (the same default chain as its other clients: environment,
 * profile, SSO, instance role), as STS names it: an assumed role's session ARN names the person who assumed it.
 * GetCallerIdentity needs no permission, so every admin can be named.
 */
async function callerArn(region: string): Promise<string> {
  const { STSClient, GetCallerIdentityCommand } = await import('@aws-sdk/client-sts');
  const out = await new STSClient({ region }).send(new GetCallerIdentityCommand({}));
  if (!out.Arn) throw new Error('STS GetCallerIdentity returned no ARN');
  return out.Arn;
}

/**
 * One region for every client, resolved once the way the SDK does (AWS_REGION, else the profile's region): the
 * stack, its API and its tables are in the same region.
 */
async function sdkRegion(): Promise<string> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const region = await new CloudFormationClient({}).config.region().catch(() => undefined);
  if (!region)
    throw new AdminError(
      'no AWS region: set AWS_REGION or a region in your AWS profile (the region the stack is deployed in)',
    );
  return region;
}

/** The values of ADMIN_OUTPUT_IDS in the deployed stack, every one required, and the UsageKeys output if it has one. */
async function stackOutputs(
  stackName: string,
  region: string,
): Promise<typeof ADMIN_OUTPUT_IDS & { readonly usageKeys?: string }> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const out = await new CloudFormationClient({ region }).send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = Object.fromEntries((out.Stacks?.[0]?.Outputs ?? []).map((x) => [x.OutputKey, x.OutputValue ?? '']));
  const need = (k: string) => {
    if (!outputs[k])
      throw new AdminError(`stack ${stackName} has no output ${k}: deploy it first (see docs/deployment.md)`);
    return outputs[k]!;
  };
  const ids = ADMIN_OUTPUT_IDS;
  return {
    tables: Object.fromEntries(Object.entries(ids.tables).map(([envVar, id]) => [envVar, need(id)])),
    ...(outputs[OUTPUT_IDS.usageKeys] ? { usageKeys: outputs[OUTPUT_IDS.usageKeys] } : {}),
  };
}

/** The storage adapters the functions use, on the target's tables, with a runtime of the admin tool's own. */
async function storesFor(
  tables: TableTarget,
  patience: DynamoDbPatience,
): Promise<Pick<AdminDeps, 'store' | 'limits' | 'history' | 'storage'>> {
  const { loadConfig } = await import('../../lambdas/shared/config.ts');
  const { createRuntime } = await import('../../lambdas/shared/runtime.ts');
  const { createKeyAdminStore } = await import('../../lambdas/storage/key-store.ts');
  const { createLimitStore } = await import('../../lambdas/storage/limit-store.ts');
  const { readUsageHistory } = await import('../../lambdas/storage/usage-history.ts');
  const { tableNamesIn } = await import('../../lambdas/storage/client.ts');
  // The runtime's storage is the functions' (2 s × 3); the admin's is its own (adminStorage), with the patience asked.
  const { telemetry } = createRuntime(
    loadConfig({
      METRICS: 'off',
      LOG_LEVEL: 'WARN',
      ...tables.tableEnv,
      ...(tables.endpoint ? { DYNAMODB_ENDPOINT: tables.endpoint } : {}),
      ...(tables.region ? { AWS_REGION: tables.region } : {}),
    }),
  );
  const storage = await adminStorage(tables, tableNamesIn(tables.tableEnv), patience);
  return {
    store: createKeyAdminStore(storage),
    limits: createLimitStore(storage, telemetry),
    history: (subject, limits, w) => readUsageHistory(storage, subject, limits, w),
    storage,
  };
}

/**
 * The admin's DynamoDB clients: the functions' (lambdas/storage/client.ts createStorage) but for how long an attempt
 * may take and how many a call makes, which are the admin's to choose (`--timeout`, `--attempts`); its `once` client
 * still makes one attempt (a counting write resent could count twice).
 */
async function adminStorage(
  tables: TableTarget,
  names: Storage['tables'],
  { timeoutMs, attempts }: DynamoDbPatience,
): Promise<Storage> {
  const { createStorage } = await import('../../lambdas/storage/client.ts');
  return createStorage({
    region: tables.region ?? 'us-east-1',
    ...(tables.endpoint ? { endpoint: tables.endpoint } : {}),
    timeoutMs,
    connectionTimeoutMs: Math.min(timeoutMs, 10_000),
    maxAttempts: attempts,
    tables: names,
  });
}
