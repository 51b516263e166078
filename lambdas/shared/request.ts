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
 * Refuses a body that is missing, too large or nested too deep, then normalises the content type's header name
 * for the body parser, which looks at `content-type` or `Content-Type` only.
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
  event.headers = { ...event.headers, 'content-type': header(event.headers, 'content-type') };
}
