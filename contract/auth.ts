/**
 * How a bearer key looks on the wire. The gateway's identity validation expression, the local gateway and the
 * authorizer all derive from one pattern. So a key the gateway lets through is one the function can read.
 */
/** A key is 20-128 URL-safe characters. */
const KEY_CHARS = '[A-Za-z0-9_-]{20,128}';

/**
 * The scheme in any case: RFC 9110 (11.1) makes auth-scheme names case-insensitive.
 * Character classes, not a flag: API Gateway's expression is a bare pattern, and the key stays case-sensitive.
 */
const SCHEME = '[Bb][Ee][Aa][Rr][Ee][Rr]';

/** The TOKEN authorizer's identity validation expression: malformed headers get 401 without invoking it. */
export const BEARER_VALIDATION_EXPRESSION = `^${SCHEME} ${KEY_CHARS}$`;

/**
 * The forms keys are issued in (lambdas/domain/keys.ts makes and checks them). Current: `ask2_`, 32 random bytes
 * (base64url, 43 characters), then a CRC-32 of what precedes it (6 characters). Old: `ask_` and 43, no check.
 */
export const CHECKED_KEY = { prefix: 'ask2_', randomBytes: 32, checkChars: 6 } as const;
export const CHECKED_KEY_LENGTH =
  CHECKED_KEY.prefix.length + Math.ceil((CHECKED_KEY.randomBytes * 4) / 3) + CHECKED_KEY.checkChars;
const CHECKED_KEY_BODY = `${CHECKED_KEY.prefix}[A-Za-z0-9_-]{${CHECKED_KEY_LENGTH - CHECKED_KEY.prefix.length}}`;
const OLD_KEY_BODY = 'ask_[A-Za-z0-9_-]{43}';
/** The exact shape of a key issued before keys carried a check. */
export const OLD_KEY_PATTERN = new RegExp(`^${OLD_KEY_BODY}$`);

/**
 * An Authorization header with a key of a form the stage accepts (the old form only while it does).
 * WAF lets only these through to the gateway: no other key was ever issued.
 */
export const keyFormExpression = (oldForm: 'accepted' | 'refused'): string =>
  `^${SCHEME} (${oldForm === 'accepted' ? `${CHECKED_KEY_BODY}|${OLD_KEY_BODY}` : CHECKED_KEY_BODY})$`;

/** Captures the key of a well-formed `Authorization: Bearer <key>` header. */
export const BEARER_PATTERN = new RegExp(`^${SCHEME} (${KEY_CHARS})$`);

/**
 * How long after its expiry a key is still recognised, so the client learns why it is refused. Meanwhile the
 * function answers 401 `key_expired` before any other storage call, counted like any request (limits and bans apply).
 * After it, the authorizer refuses the key like an unknown one (a plain 401), and no function runs.
 */
export const EXPIRED_NOTICE_SECONDS = 86_400;

/** What an expired key is told (401 `key_expired`). */
export function expiredMessage(validUntilSec: number): string {
  return `The API key expired at ${new Date(validUntilSec * 1000).toISOString()}.`;
}

/** What a read-only key is told when it calls an operation that changes data (403 `key_read_only`). */
export function readOnlyMessage(method: string, path: string): string {
  return `This API key may only read: ${method} ${path} changes data.`;
}
