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
  // Layers read repeated Authorization headers differently (the first, the last): the key checked and the key
  // named could differ, so two are refused before anything is counted.
  const given = Object.entries(event.multiValueHeaders ?? {})
    .filter(([k]) => k.toLowerCase() === 'authorization')
    .reduce((n, [, v]) => n + (v?.length ?? 0), 0);
  if (given > 1) throw new AppError('unauthorized', 'Send one Authorization header: two or more are ambiguous.');
  const a = event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
  const perMinute = Number(a?.perMinute);
  const perDay = Number(a?.perDay);
  if (!a || typeof a.keyId !== 'string' || !(perMinute > 0) || !(perDay > 0)) throw new AppError('unauthorized');
  const keyHash = typeof a.keyHash === 'string' && /^[0-9a-f]{64}$/.test(a.keyHash) ? a.keyHash : undefined;
  // Absent from an authorizer of before scopes and expiry (every key it allows may do everything, forever). A value
  // this code cannot read narrows: an unknown scope reads only, an unreadable expiry is no key.
  const scope = a.scope === undefined || a.scope === 'all' ? 'all' : 'read';
  const validUntil = a.validUntil === undefined ? 0 : Number(a.validUntil);
  if (!(validUntil >= 0)) throw new AppError('unauthorized');
  return {
    keyId: a.keyId,
    plan: a.plan as AuthContext['plan'],
    perMinute,
    perDay,
    ...(keyHash ? { keyHash } : {}),
    scope,
    validUntil,
  };
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
 * The first key that appears twice in one object of a JSON text, at any depth (JSON.parse keeps the last one
 * silently, so the client and the service could read different bodies). One pass over the text; keys are compared
 * decoded, so `"a"` and `"\u0061"` are the same key.
 */
export function duplicateKey(text: string): string | undefined {
  const stack: (Set<string> | undefined)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */) stack.push(new Set());
    else if (c === 91 /* [ */) stack.push(undefined);
    else if (c === 125 || c === 93) stack.pop();
    else if (c === 34 /* " */) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) {
          escaped = true;
          i++;
        } else if (d === 34) break;
      }
      const keys = stack[stack.length - 1];
      if (!keys) continue;
      let j = i + 1;
      while (j < text.length && (text[j] === ' ' || text[j] === '\n' || text[j] === '\r' || text[j] === '\t')) j++;
      if (text[j] !== ':') continue; // a value, not a key
      let key = text.slice(start + 1, i);
      if (escaped) {
        try {
          key = JSON.parse(text.slice(start, i + 1)) as string;
        } catch {
          return undefined; // not JSON: the parser answers invalid_json
        }
      }
      if (keys.has(key)) return key;
      keys.add(key);
    }
  }
  return undefined;
}

/** A JSON media type (`application/json`, `application/problem+json`…; the pattern @middy/http-json-body-parser used). */
const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

/** `application/json; charset=utf-8` → its charset, lower-cased and unquoted; undefined when it names none. */
function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '');
  return m ? m[2]!.toLowerCase() : undefined;
}

/**
 * What the body's headers say about its bytes, refused when the service could only guess: JSON is UTF-8 (RFC
 * 8259), so another charset is 415 rather than bytes read as UTF-8; a content coding (gzip, br, …) is 415 since
 * the service decodes none (`identity`, no coding, is accepted).
 */
function checkEncoding(headers: Headers): void {
  const type = header(headers, 'content-type');
  // A body that is not JSON at all is 415, checked first so that a non-JSON body is answered for its type, not for
  // what its bytes look like.
  if (!type || !JSON_TYPE.test(type)) throw new AppError('unsupported_media_type');
  const charset = charsetOf(type);
  if (charset !== undefined && charset !== 'utf-8')
    throw new AppError('unsupported_media_type', `The body must be UTF-8 JSON: charset ${charset} is not accepted.`);
  const codings = (header(headers, 'content-encoding') ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s && s !== 'identity');
  if (codings.length)
    throw new AppError(
      'unsupported_media_type',
      `Content-Encoding ${codings.join(', ')} is not accepted: send the body uncompressed.`,
    );
}

/** U+FFFD: what API Gateway and the local gateway put where a body's bytes were not UTF-8. */
const REPLACEMENT = '\uFFFD';

/** Whether a text is JSON: asked only of a body about to be refused, never of one the parser will read. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * What the JSON body parser does not check, made before it parses (json-body.ts: this step, then
 * @middy/http-json-body-parser): a body that is missing, too large, nested too deep, not UTF-8 (a charset, a content
 * coding, or bytes that were not UTF-8), not JSON by its type (415), or ambiguous: a key given twice (JSON.parse keeps
 * the last one silently). The parser refuses prototype keys itself (http.ts maps its answer). The body is left as
 * the text checked, decoded from base64, so the parser reads exactly that text and parses it once; a body that is
 * not JSON is left to the parser too (invalid_json).
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
  checkEncoding(event.headers);
  if (typeof raw !== 'string') throw new AppError('invalid_json');
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (text.includes(REPLACEMENT))
    throw new AppError(
      'invalid_json',
      'The request body is not valid UTF-8 (U+FFFD, the mark of bytes that were not UTF-8, is not accepted).',
    );
  const twice = duplicateKey(text);
  // A text that is not JSON at all is answered as such (by the parser), whatever it repeats.
  if (twice !== undefined && isJson(text))
    throw new AppError('validation_failed', `Invalid body: the key "${twice.slice(0, 64)}" is given more than once.`);
  event.body = text;
  event.isBase64Encoded = false;
}
