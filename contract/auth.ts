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

/** Captures the key of a well-formed `Authorization: Bearer <key>` header. */
export const BEARER_PATTERN = new RegExp(`^${SCHEME} (${KEY_CHARS})$`);
