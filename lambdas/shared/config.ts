/**
 * Runtime configuration, parsed once through a schema by the composition root (lambdas/shared/runtime.ts) from the
 * function's environment: a missing or malformed variable fails the init, not the hundredth request. Nothing here
 * reads the environment on import; whoever composes a function passes the variables in.
 */
import * as z from 'zod/mini';
import { TABLES, type TableEnvVar } from '../../contract/tables.ts';
import { LOG_LEVELS } from './observability.ts';

const text = (min: number) => z.string().check(z.minLength(min));

/**
 * Every table's variable, from the declarations (contract/tables.ts). Each is optional: a function's environment
 * holds only the tables its access names, and using another one fails naming its variable (storage/client.ts).
 */
const TABLE_VARS = Object.fromEntries(TABLES.map((t) => [t.envVar, z.optional(text(3))])) as Record<
  TableEnvVar,
  z.ZodMiniOptional<ReturnType<typeof text>>
>;

const Env = z.object({
  ...TABLE_VARS,
  STAGE: z._default(text(1), 'local'),
  /** The stage the stack's API keys are named for (the authorizer only); STAGE when unset. */
  USAGE_KEYS_STAGE: z.optional(text(1)),
  AWS_REGION: z._default(text(1), 'us-east-1'),
  /** Set locally (DynamoDB Local); unset in AWS. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  /** Per-attempt DynamoDB request timeout (3 attempts at most): bounded well under API Gateway's 29 s. */
  DYNAMODB_TIMEOUT_MS: z._default(z.pipe(z.coerce.number(), z.int().check(z.minimum(100), z.maximum(8_000))), 2_000),
  /**
   * The stage's Secrets Manager secret that signs pagination cursors (the list operations only: their entries'
   * `access.cursorSecret`): its ARN, never its value, which the function reads at cold start
   * (shared/cursor-keys.ts). Ignored with STAGE=local.
   */
  CURSOR_SECRET_ARN: z.optional(text(20)),
  /**
   * A value that signs cursors in place of the stage's secret, without Secrets Manager: for local runs, tests and
   * benchmarks. The stack never sets it (test/infra/cursor-secret.test.ts): a stage's value stays out of function
   * configuration.
   */
  CURSOR_SECRET: z.optional(text(16)),
  /** Browser origins allowed by CORS, comma-separated (stage config). Empty: CORS denied. */
  CORS_ALLOWED_ORIGINS: z.pipe(
    z._default(z.string(), ''),
    z.transform((v: string) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    ),
  ),
  /**
   * Whether the authorizer still looks up keys of the form issued before keys carried a check (`ask_` + 43): set to
   * "refused" by `-c animal-store:<stage>:oldKeyForm=refused` once none is left, so no token costs a read unless it
   * passes its check (lambdas/domain/keys.ts keyForm).
   */
  OLD_KEY_FORM: z._default(z.enum(['accepted', 'refused']), 'accepted'),
  /**
   * The authorizer's result cache TTL (seconds): how long a function trusts a ban it learnt before asking storage
   * again, so a lifted ban (`keys unban`) is served when the gateway serves it. The stack's TTL (60 s) by default.
   */
  AUTH_CACHE_TTL_SECONDS: z._default(z.pipe(z.coerce.number(), z.int().check(z.minimum(0), z.maximum(3_600))), 60),
  /** Set to "off" to bypass the rate limiter (benchmarks measure its overhead this way; never in a stage). */
  RATE_LIMITER: z._default(z.enum(['on', 'off']), 'on'),
  /** The `service` of log lines and metrics. */
  SERVICE_NAME: z._default(text(1), 'animal-store'),
  /** The CloudWatch namespace of the EMF metrics. */
  METRICS_NAMESPACE: z._default(text(1), 'AnimalStore'),
  /** "off" locally: no EMF lines among a developer's logs. */
  METRICS: z._default(z.enum(['on', 'off']), 'on'),
  LOG_LEVEL: z._default(z.enum(LOG_LEVELS), 'INFO'),
  /** The share of invocations (0 to 1) logged at DEBUG whatever LOG_LEVEL says: Powertools' own variable. */
  POWERTOOLS_LOGGER_SAMPLE_RATE: z.optional(z.pipe(z.coerce.number(), z.number().check(z.minimum(0), z.maximum(1)))),
});
export type Config = z.infer<typeof Env>;

/** The configuration in `env` (a function's environment variables); throws naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** Public (it is in this file), so anyone can sign cursors with it: acceptable only for STAGE=local. */
export const LOCAL_CURSOR_SECRET = 'local-development-cursor-secret';
