/**
 * Reading the API Gateway proxy event: headers, the authorizer's context, and the body checks made before the
 * JSON parser sees a body.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { MAX_BODY_BYTES } from '../../contract/schemas.ts';
import { AppError } from '../domain/errors.ts';
import type { AuthContext } from '../domain/keys.ts';

type Headers = APIGatewayProxyEvent['headers'] | null | undefined;

/** A header's value, whatever the case of its name (API Gateway passes names as the client sent them). */
export function header(headers: Headers, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() === lower) return v ?? undefined;
  return undefined;
}

/** Reads the authorizer's context; an event without one never reaches a handler (defence in depth). */
export function authContext(event: APIGatewayProxyEvent): AuthContext {
  const a = event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
  const perMinute = Number(a?.perMinute);
  const perDay = Number(a?.perDay);
  if (!a || typeof a.keyId !== 'string' || !(perMinute > 0) || !(perDay > 0)) throw new AppError('unauthorized');
  return { keyId: a.keyId, plan: a.plan as AuthContext['plan'], perMinute, perDay };
}

/** No NewPet needs more than a few levels; deeper bodies are refused before the parser recurses into them. */
const MAX_JSON_DEPTH = 32;

/** The deepest `{`/`[` nesting in a JSON text, ignoring brackets inside strings (stops counting past the cap). */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length && max <= MAX_JSON_DEPTH; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/**
 * Keys the JSON body parser refuses outright as prototype pollution (@middy/util's jsonParseProtectProto), which
 * it reports like malformed JSON. For us they are unknown fields, and unknown fields are ignored.
 */
const isPrototypeKey = (key: string, value: unknown): boolean =>
  key === '__proto__' ||
  (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype'));
/** A body without these words (or an escape that could spell them) has no such key: the common case costs a scan. */
const MAY_HAVE_PROTOTYPE_KEY = /__proto__|constructor|\\u/;

/** The body without `__proto__` and `constructor.prototype` keys; the text itself when it has none or is not JSON. */
function withoutPrototypeKeys(text: string): string {
  if (!MAY_HAVE_PROTOTYPE_KEY.test(text)) return text;
  let dropped = false;
  try {
    // JSON.parse makes `__proto__` an own property (it never sets the prototype); the reviver then deletes it.
    const value: unknown = JSON.parse(text, (key, v: unknown) => {
      if (!isPrototypeKey(key, v)) return v;
      dropped = true;
      return undefined;
    });
    return dropped ? JSON.stringify(value) : text;
  } catch {
    return text; // not JSON: the parser answers invalid_json
  }
}

/**
 * Refuses a body that is missing, too large or nested too deep, drops prototype keys (see isPrototypeKey), then
 * normalises the content type's header name for the body parser, which looks at `content-type` or `Content-Type`
 * only.
 */
export function guardBody(event: Pick<APIGatewayProxyEvent, 'headers' | 'isBase64Encoded'> & { body: unknown }): void {
  const raw = event.body;
  const size = typeof raw === 'string' ? Buffer.byteLength(raw, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
  if (size > MAX_BODY_BYTES)
    throw new AppError('payload_too_large', `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
  if (raw === null || raw === undefined || raw === '')
    throw new AppError('validation_failed', 'A JSON request body is required.');
  if (typeof raw === 'string' && nestingDepth(raw) > MAX_JSON_DEPTH)
    throw new AppError('validation_failed', `The JSON body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  if (typeof raw === 'string') {
    const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    const kept = withoutPrototypeKeys(text);
    if (kept !== text) Object.assign(event, { body: kept, isBase64Encoded: false });
  }
  event.headers = { ...event.headers, 'content-type': header(event.headers, 'content-type') };
}
