/**
 * Where a list operation's cursor keys come from. In a stage: the Secrets Manager secret CURSOR_SECRET_ARN names,
 * read at start (secrets-manager.ts). Never a configuration value: anyone with lambda:GetFunctionConfiguration
 * reads those, and CloudFormation re-resolves one only when the function changes. Elsewhere: CURSOR_SECRET if given
 * (tests, benchmarks), else with STAGE=local the public development constant.
 * AWSCURRENT signs; AWSPENDING and AWSPREVIOUS also verify, so no container fails to read another's cursor during a
 * rotation (docs/runbook.md, "Rotating the cursor secret"). Values are re-read every CURSOR_KEYS_REFRESH_MS at
 * most, so a rotation reaches warm containers, which live for hours, in bounded time.
 */
import type { CursorKeys } from '../domain/pagination.ts';
import { LOCAL_CURSOR_SECRET, type Config } from './config.ts';

import type { SecretReader, SecretVersionStage } from '../storage/secrets-manager.ts';

export type { SecretReader, SecretVersionStage };

/** The keys as of now; resolves from a cache except once every CURSOR_KEYS_REFRESH_MS. */
export type CursorKeySource = () => Promise<CursorKeys>;

/** How stale a container's keys may get: the wait between the steps of a rotation is longer than this. */
export const CURSOR_KEYS_REFRESH_MS = 5 * 60_000;

/** After a failed refresh the last keys are kept and the read is tried again this much later, not on every request. */
const RETRY_AFTER_FAILURE_MS = 60_000;

/** Shorter values are refused: an HMAC key anyone could guess makes the cursors forgeable. */
const MIN_SECRET_LENGTH = 16;

/**
 * The cursor keys of a function with this configuration, or undefined when it has none (in a stage, every
 * function whose route entry does not declare `access.cursorSecret`).
 */
export function cursorKeySource(
  c: Pick<Config, 'STAGE' | 'CURSOR_SECRET' | 'CURSOR_SECRET_ARN'>,
  read: SecretReader | undefined,
  now: () => number,
  onRefreshFailure: (error: unknown) => void = () => undefined,
): CursorKeySource | undefined {
  // A value given directly (local runs, tests that run a stage's environment in-process); the stack never sets it.
  if (c.CURSOR_SECRET || c.STAGE === 'local') {
    const keys: CursorKeys = { current: c.CURSOR_SECRET ?? LOCAL_CURSOR_SECRET };
    return async () => keys;
  }
  if (!c.CURSOR_SECRET_ARN || !read) return undefined;
  return secretCursorKeys(c.CURSOR_SECRET_ARN, read, now, onRefreshFailure);
}

async function readKeys(secretId: string, read: SecretReader): Promise<CursorKeys> {
  const [current, pending, previous] = await Promise.all([
    read(secretId, 'AWSCURRENT'),
    read(secretId, 'AWSPENDING'),
    read(secretId, 'AWSPREVIOUS'),
  ]);
  if (!current || current.length < MIN_SECRET_LENGTH)
    throw new Error(`The cursor secret's AWSCURRENT value is missing or shorter than ${MIN_SECRET_LENGTH} characters`);
  // A staged value that is too short is not used (not even to verify) rather than failing every request.
  const accepted = [pending, previous].filter(
    (v): v is string => v !== undefined && v.length >= MIN_SECRET_LENGTH && v !== current,
  );
  return { current, accepted: [...new Set(accepted)] };
}

/**
 * The secret's keys, read now and again once they are CURSOR_KEYS_REFRESH_MS old; concurrent callers share a read.
 * Only the first read is waited for (the cold start); a refresh runs beside the requests that keep the old keys.
 */
export function secretCursorKeys(
  secretId: string,
  read: SecretReader,
  now: () => number,
  onRefreshFailure: (error: unknown) => void = () => undefined,
): CursorKeySource {
  let cached: { keys: CursorKeys; refreshAt: number } | undefined;
  let reading: Promise<CursorKeys> | undefined;
  return () => {
    if (cached && now() < cached.refreshAt) return Promise.resolve(cached.keys);
    reading ??= readKeys(secretId, read)
      .then(
        (keys) => {
          cached = { keys, refreshAt: now() + CURSOR_KEYS_REFRESH_MS };
          return keys;
        },
        (error: unknown) => {
          // Only the first read may fail the caller (the cold start); later, the keys in hand keep serving.
          if (!cached) throw error;
          onRefreshFailure(error);
          cached = { keys: cached.keys, refreshAt: now() + RETRY_AFTER_FAILURE_MS };
          return cached.keys;
        },
      )
      .finally(() => {
        reading = undefined;
      });
    // Once keys are in hand, a refresh never holds up a request: it answers with them while the read goes on.
    return cached ? Promise.resolve(cached.keys) : reading;
  };
}
