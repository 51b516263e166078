/**
 * Runtime configuration, read once at cold start through a schema: a missing or malformed variable fails the
 * init, not the hundredth request.
 */
import * as z from 'zod';

const Env = z.object({
  PETS_TABLE_NAME: z.string().min(3),
  KEYS_TABLE_NAME: z.string().min(3),
  STATE_TABLE_NAME: z.string().min(3),
  STAGE: z.string().min(1).default('local'),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /** Set locally (DynamoDB Local); unset in AWS. */
  DYNAMODB_ENDPOINT: z.url().optional(),
  /** Per-attempt DynamoDB request timeout (3 attempts at most): bounded well under API Gateway's 29 s. */
  DYNAMODB_TIMEOUT_MS: z.coerce.number().int().min(100).max(8_000).default(2_000),
  /** Per-stage secret that signs pagination cursors. */
  CURSOR_SECRET: z.string().min(16).default('local-development-cursor-secret'),
  /** Browser origins allowed by CORS, comma-separated (stage config). Empty: CORS denied. */
  CORS_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean)),
  /** Set to "off" to bypass the rate limiter (benchmarks measure its overhead this way; never in a stage). */
  RATE_LIMITER: z.enum(['on', 'off']).default('on'),
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
