/**
 * Runtime configuration, read once at cold start through a schema: a missing or malformed variable fails the
 * init, not the hundredth request.
 */
import * as z from 'zod/mini';

const text = (min: number) => z.string().check(z.minLength(min));

const Env = z.object({
  PETS_TABLE_NAME: text(3),
  KEYS_TABLE_NAME: text(3),
  STATE_TABLE_NAME: text(3),
  STAGE: z._default(text(1), 'local'),
  AWS_REGION: z._default(text(1), 'us-east-1'),
  /** Set locally (DynamoDB Local); unset in AWS. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  /** Per-attempt DynamoDB request timeout (3 attempts at most): bounded well under API Gateway's 29 s. */
  DYNAMODB_TIMEOUT_MS: z._default(z.pipe(z.coerce.number(), z.int().check(z.minimum(100), z.maximum(8_000))), 2_000),
  /** Per-stage secret that signs pagination cursors. */
  CURSOR_SECRET: z._default(text(16), 'local-development-cursor-secret'),
  /** Browser origins allowed by CORS, comma-separated (stage config). Empty: CORS denied. */
  CORS_ALLOWED_ORIGINS: z.pipe(
    z._default(z.string(), ''),
    z.transform((v: string) => v.split(',').map((o) => o.trim()).filter(Boolean)),
  ),
  /** Set to "off" to bypass the rate limiter (benchmarks measure its overhead this way; never in a stage). */
  RATE_LIMITER: z._default(z.enum(['on', 'off']), 'on'),
});
export type Config = z.infer<typeof Env>;

function load(): Config {
  const parsed = Env.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

export const config: Config = load();
