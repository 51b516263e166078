/**
 * Starts the whole API locally: DynamoDB Local (or a given endpoint), its tables, the functions' environment,
 * development keys, and the local gateway. `npm start`, the integration tests and the benchmarks all use this.
 */
import { BEARER_PATTERN } from '../../contract/auth.ts';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { startDynamoLocal, type DynamoLocal } from './dynamodb.ts';
import type { RunningGateway } from './gateway.ts';

export interface DevKey {
  readonly key: string;
  readonly plan: PlanName;
}

export interface LocalApiOptions {
  /** HTTP port of the API (0 = any free port). */
  readonly port?: number;
  readonly host?: string;
  /** Use this DynamoDB endpoint instead of starting DynamoDB Local. */
  readonly dynamoEndpoint?: string;
  /** Port for the DynamoDB Local this starts (default: a free one). */
  readonly dynamoPort?: number;
  /** Keep data on disk here instead of in memory. */
  readonly dataDir?: string;
  /** Physical table name prefix. */
  readonly tablePrefix?: string;
  readonly devKeys?: readonly DevKey[];
  readonly authCacheTtlSeconds?: number;
  /** The functions' timeout in the local gateway (default: the deployed one, 10 s). */
  readonly functionTimeoutMs?: number;
  /** Extra environment for the functions (e.g. RATE_LIMITER=off for benchmarks). */
  readonly env?: Record<string, string>;
}

export interface LocalApi {
  readonly url: string;
  readonly port: number;
  readonly dynamoEndpoint: string;
  readonly dynamo?: DynamoLocal;
  readonly tableEnv: Record<string, string>;
  close(): Promise<void>;
}

/** Parses ANIMAL_STORE_DEV_KEYS: `<key>:<plan>,…`. */
export function parseDevKeys(spec: string): DevKey[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const i = entry.lastIndexOf(':');
      const key = i > 0 ? entry.slice(0, i) : entry;
      const plan = (i > 0 ? entry.slice(i + 1) : 'free').toLowerCase();
      if (!BEARER_PATTERN.test(`Bearer ${key}`)) throw new Error(`ANIMAL_STORE_DEV_KEYS: a key must be 20-128 URL-safe characters (A-Z a-z 0-9 _ -): "${key.slice(0, 8)}…"`);
      if (!(PLAN_NAMES as readonly string[]).includes(plan) || plan === 'enterprise') {
        throw new Error(`ANIMAL_STORE_DEV_KEYS: unknown plan "${plan}" (use free, pro or business)`);
      }
      return { key, plan: plan as PlanName };
    });
}

export async function startLocalApi(opts: LocalApiOptions = {}): Promise<LocalApi> {
  const dynamo = opts.dynamoEndpoint ? undefined : await startDynamoLocal({ port: opts.dynamoPort, dataDir: opts.dataDir });
  const dynamoEndpoint = opts.dynamoEndpoint ?? dynamo!.endpoint;
  try {
    const { provisionLocalTables } = await import('../../lambdas/storage/provision.ts');
    const tableEnv = await provisionLocalTables(dynamoEndpoint, opts.tablePrefix ?? 'animal-store-local');
    Object.assign(process.env, {
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      AWS_REGION: 'us-east-1',
      STAGE: 'local',
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      ...tableEnv,
      ...opts.env,
    });
    if (opts.devKeys?.length) {
      const { seedKeys } = await import('./keys.ts');
      await seedKeys(opts.devKeys);
    }
    const { startGateway } = await import('./gateway.ts');
    const gw: RunningGateway = await startGateway({ port: opts.port, host: opts.host, authCacheTtlSeconds: opts.authCacheTtlSeconds, functionTimeoutMs: opts.functionTimeoutMs });
    return {
      url: gw.url,
      port: gw.port,
      dynamoEndpoint,
      dynamo,
      tableEnv,
      async close() {
        await gw.close();
        await dynamo?.stop();
      },
    };
  } catch (err) {
    await dynamo?.stop();
    throw err;
  }
}
