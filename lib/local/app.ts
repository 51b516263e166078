/**
 * Starts the whole API locally from the synthesized stack: DynamoDB Local (or a given endpoint), its tables, the
 * template's functions with their environment, development keys, and the gateway emulating the template's REST API.
 * `npm start`, the integration tests and the benchmarks all use this.
 */
import { cursorKeySource } from '../../lambdas/shared/cursor-keys.ts';
import { BEARER_PATTERN } from '../../contract/auth.ts';
import { keyForm } from '../../lambdas/domain/keys.ts';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { TABLES } from '../../contract/tables.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import type { LineWriter } from '../../lambdas/shared/observability.ts';
import { createRuntime, type Clock } from '../../lambdas/shared/runtime.ts';
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { startDynamoLocal, type DynamoLocal } from './dynamodb.ts';
import { functionEnvironment } from './environment.ts';
import { startGateway } from './gateway.ts';
import { enforceRole, rolePolicy } from './iam.ts';
import { seedKeys } from './keys.ts';
import { buildFunctions, type LocalFunction } from './lambda.ts';
import { localAssembly, type LocalAssembly } from './synth.ts';
import { apiModel, type ApiModel } from './template.ts';
import type { StageThrottle } from './stage-throttle.ts';
import type { UsagePlanEnforcer } from './usage-plans.ts';

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
  /** Overrides the authorizer result TTL of the template (seconds; 0 = off, so revocations show at once). */
  readonly authCacheTtlSeconds?: number;
  /**
   * Throttle a function past the template's ReservedConcurrentExecutions, as Lambda does (lib/local/lambda.ts).
   * Tests about other things turn it off: with the cache off, each of their concurrent requests runs the authorizer.
   * @default true
   */
  readonly reservedConcurrency?: boolean;
  /** Enforce the template's usage plans (a token bucket per API key, and a plan's day quota). @default true */
  readonly usagePlans?: boolean;
  /**
   * Enforce the stage's throttle (a token bucket per method, from the template) and the account's, before the
   * authorizer, as API Gateway does. @default true
   */
  readonly stageThrottle?: boolean;
  /** Browser origins allowed by CORS: synthesizes the stack with these instead of the stage's. */
  readonly corsAllowedOrigins?: readonly string[];
  /** An assembly already synthesized. @default - localAssembly() (cached per state of the sources) */
  readonly assembly?: LocalAssembly;
  /** Extra environment for the functions (e.g. RATE_LIMITER=off for benchmarks, LOG_LEVEL=DEBUG). */
  readonly env?: Record<string, string>;
  /** The clock of the functions and the gateway (tests move it across windows and dates). @default Date.now */
  readonly now?: Clock;
  /** Where the functions' log lines go. @default stdout */
  readonly log?: LineWriter;
}

export interface LocalApi {
  readonly url: string;
  readonly port: number;
  readonly dynamoEndpoint: string;
  readonly dynamo?: DynamoLocal;
  readonly tableEnv: Record<string, string>;
  /** Development keys already stored and revoked (a kept ANIMAL_STORE_DATA_DIR): left revoked, answered 401. */
  readonly inactiveDevKeys: readonly DevKey[];
  /** What the gateway emulates, as read from the template. */
  readonly model: ApiModel;
  /** The usage-plan counters. */
  readonly usage: UsagePlanEnforcer;
  /** The stage's and the account's throttle counters (requests each bucket refused). */
  readonly throttles: StageThrottle;
  /** The template's functions as built here, by logical id. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
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
      // Only a key of a form the authorizer looks up: any other token it refuses without a read.
      if (!BEARER_PATTERN.test(`Bearer ${key}`) || keyForm(key) === 'forged')
        throw new Error(
          `ANIMAL_STORE_DEV_KEYS: a key must be of the issued form (npm run admin -- keys create, or ask_ + 43 URL-safe characters): "${key.slice(0, 8)}…"`,
        );
      if (!(PLAN_NAMES as readonly string[]).includes(plan) || plan === 'enterprise') {
        throw new Error(`ANIMAL_STORE_DEV_KEYS: unknown plan "${plan}" (use free, pro or business)`);
      }
      return { key, plan: plan as PlanName };
    });
}

export async function startLocalApi(opts: LocalApiOptions = {}): Promise<LocalApi> {
  const assembly =
    opts.assembly ??
    (await localAssembly(opts.corsAllowedOrigins ? { corsAllowedOrigins: opts.corsAllowedOrigins } : {}));
  const model = apiModel(assembly.template);
  const dynamo = opts.dynamoEndpoint
    ? undefined
    : await startDynamoLocal({ port: opts.dynamoPort, dataDir: opts.dataDir });
  const dynamoEndpoint = opts.dynamoEndpoint ?? dynamo!.endpoint;
  try {
    const tableEnv = await provisionLocalTables(dynamoEndpoint, opts.tablePrefix ?? 'animal-store-local');
    let inactiveDevKeys: DevKey[] = [];
    if (opts.devKeys?.length) {
      const seeding = localStorage(dynamoEndpoint, tableEnv);
      inactiveDevKeys = await seedKeys(seeding, opts.devKeys).finally(() => seeding.ddb.destroy());
    }
    const tables = Object.fromEntries(TABLES.map((t) => [t.id, tableEnv[t.envVar]!]));
    // A function trusts a ban it learnt as long as the gateway caches the authorizer's answer (limiter.ts).
    const ttlEnv: Record<string, string> =
      opts.authCacheTtlSeconds !== undefined ? { AUTH_CACHE_TTL_SECONDS: String(opts.authCacheTtlSeconds) } : {};
    // Each function gets its own environment from the template, as in Lambda, and its own runtime, whose DynamoDB
    // calls its role in the template must allow (iam.ts): locally no function can do what its deployed role cannot.
    const defs = [...model.functions.values()].map((def) =>
      opts.reservedConcurrency === false ? { ...def, reservedConcurrency: undefined } : def,
    );
    const functions = buildFunctions(defs, (def) => {
      const runtime = createRuntime(
        loadConfig(functionEnvironment(assembly.template, def, { tables, dynamoEndpoint }, { ...ttlEnv, ...opts.env })),
        {
          now: opts.now,
          write: opts.log,
          // As in AWS, only a function the template gives the cursor secret signs cursors.
          ...(def.environment.CURSOR_SECRET_ARN !== undefined ? { cursorKeys: cursorKeySource } : {}),
        },
      );
      const policy = rolePolicy(assembly.template, def, { tables });
      for (const client of [runtime.storage.ddb, runtime.storage.once.ddb]) enforceRole(client, def, policy);
      return runtime;
    });
    const gw = await startGateway({
      port: opts.port,
      host: opts.host,
      model,
      functions,
      authCacheTtlSeconds: opts.authCacheTtlSeconds,
      usagePlans: opts.usagePlans,
      stageThrottle: opts.stageThrottle,
      now: opts.now,
    });
    return {
      url: gw.url,
      port: gw.port,
      dynamoEndpoint,
      dynamo,
      tableEnv,
      inactiveDevKeys,
      model,
      usage: gw.usage,
      throttles: gw.throttles,
      functions,
      async close() {
        await gw.close();
        // Each function's DynamoDB client keeps its sockets open until destroyed.
        for (const f of functions.values()) f.runtime.storage.ddb.destroy();
        await dynamo?.stop();
      },
    };
  } catch (err) {
    await dynamo?.stop();
    throw err;
  }
}
