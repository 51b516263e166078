/**
 * How a bearer key looks on the wire. The TOKEN authorizer's identity validation expression, the local gateway and
 * the authorizer's own parsing all derive from this one pattern, so a key the gateway lets through is one the
 * function can read.
 */
/**
 * A key is 20-128 URL-safe characters. Generated keys: `ask2_` + 32 random bytes (base64url) + a CRC-32
 * (lambdas/domain/keys.ts).
 */
const KEY_CHARS = '[A-Za-z0-9_-]{20,128}';

/**
 * The scheme, in any case: RFC 9110 (11.1) makes auth-scheme names case-insensitive, so `bearer` and `BEARER` are
 * `Bearer`. Spelt as character classes rather than a flag: API Gateway's identity validation expression is a bare
 * pattern, and the key's characters stay case-sensitive.
 */
const SCHEME = '[Bb][Ee][Aa][Rr][Ee][Rr]';

/** The TOKEN authorizer's identity validation expression: malformed headers get 401 without invoking it. */
export const BEARER_VALIDATION_EXPRESSION = `^${SCHEME} ${KEY_CHARS}$`;

/**
 * The forms keys are issued in (lambdas/domain/keys.ts generates and checks them): `ask2_` + 32 random bytes
 * (base64url, 43 characters) + a CRC-32 of what precedes it (6 characters); and the old form, `ask_` + 43, no check.
 */
export const CHECKED_KEY = { prefix: 'ask2_', randomBytes: 32, checkChars: 6 } as const;
export const CHECKED_KEY_LENGTH =
  CHECKED_KEY.prefix.length + Math.ceil((CHECKED_KEY.randomBytes * 4) / 3) + CHECKED_KEY.checkChars;
const CHECKED_KEY_BODY = `${CHECKED_KEY.prefix}[A-Za-z0-9_-]{${CHECKED_KEY_LENGTH - CHECKED_KEY.prefix.length}}`;
const OLD_KEY_BODY = 'ask_[A-Za-z0-9_-]{43}';
/** The exact shape of a key issued before keys carried a check. */
export const OLD_KEY_PATTERN = new RegExp(`^${OLD_KEY_BODY}$`);

/**
 * An Authorization header that carries a key of a form the stage accepts (the old form only while it does): what
 * WAF lets through to the gateway. Anything else of a bearer key's shape is no key anyone was issued.
 */
export const keyFormExpression = (oldForm: 'accepted' | 'refused'): string =>
  `^${SCHEME} (${oldForm === 'accepted' ? `${CHECKED_KEY_BODY}|${OLD_KEY_BODY}` : CHECKED_KEY_BODY})$`;

/** Captures the key of a well-formed `Authorization: Bearer <key>` header. */
export const BEARER_PATTERN = new RegExp(`^${SCHEME} (${KEY_CHARS})$`);

/**
 * How long after its expiry a key is still recognised, to be told so: the authorizer lets it through with its
 * context and the function answers 401 `key_expired`, counted like any request (so its limits and bans still
 * apply) and before any other storage call, so the client learns why. After this the authorizer refuses it as it refuses an unknown key (a plain 401: no function
 * runs, however long the client keeps sending).
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
