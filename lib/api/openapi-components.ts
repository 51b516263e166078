/**
 * The parts of the OpenAPI document every operation shares: the component schemas (collected from what the route
 * entries name), the header components (contract/headers.ts) and the error responses every operation can give.
 * Plain data, like the document (lib/api/openapi.ts).
 */
import * as z from 'zod/mini';
import { ERROR_CODES } from '../../contract/errors.ts';
import { RESPONSE_HEADERS } from '../../contract/headers.ts';
import { ErrorObject } from '../../contract/schemas.ts';
import type { ErrorResponseSpec, HeaderDoc, Route } from '../../contract/routes.ts';

export type Json = Record<string, unknown>;

export const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

const isZod = (s: unknown): s is z.ZodMiniType => typeof s === 'object' && s !== null && '_zod' in s;
export const idOf = (schema: unknown): string | undefined =>
  isZod(schema) ? (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id : undefined;

/** The id a schema is registered with; `what` names the place in the error when it has none. */
export const named = (schema: unknown, what: string): string => {
  const id = idOf(schema);
  if (!id) throw new Error(`${what}: the schema lacks .meta({ id }), so the document cannot name it`);
  return id;
};

/**
 * The component schemas: every named zod schema the route entries use (documented parameters, request bodies,
 * success bodies) and the Error object, with the named schemas each uses, as JSON Schema 2020-12 (OpenAPI 3.1's
 * dialect). Request bodies are converted as input (unknown fields of a NewPet are ignored, so it must not forbid
 * them), the rest as output. Ordered as a reader meets them (parameters, request bodies, responses), each after
 * the schemas it uses.
 */
export function componentSchemas(routes: readonly Route[], parameterSchemas: readonly unknown[]): Record<string, Json> {
  const inputs = new Set<unknown>();
  const roots: unknown[] = [...parameterSchemas];
  for (const r of routes)
    if (r.request.body) {
      named(r.request.body, `${r.operationId} request body`);
      roots.push(r.request.body);
      inputs.add(r.request.body);
    }
  for (const r of routes)
    if (r.success?.schema) {
      named(r.success.schema, `${r.operationId} ${r.success.status} response`);
      roots.push(r.success.schema);
    }
  roots.push(ErrorObject);

  const schemas: Record<string, Json> = {};
  const localRef = /^#\/\$defs\/(.+)$/;
  const relink = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(relink);
    if (typeof v !== 'object' || v === null) return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) {
      const m = k === '$ref' && typeof x === 'string' ? localRef.exec(x) : null;
      out[k] = m ? `#/components/schemas/${m[1]}` : relink(x);
    }
    return out;
  };
  for (const root of roots) {
    const id = named(root, 'component');
    if (schemas[id]) continue;
    const io = inputs.has(root) ? 'input' : 'output';
    const defs = (z.toJSONSchema(root as z.ZodMiniType, { target: 'draft-2020-12', io }).$defs ?? {}) as Record<
      string,
      Json
    >;
    // Depth first, so that each schema follows the ones it uses.
    const visit = (name: string) => {
      if (schemas[name]) return;
      const { id: _id, ...def } = defs[name]!;
      schemas[name] = {}; // marks it visited (a recursive schema must not loop)
      for (const dep of JSON.stringify(def).matchAll(/"#\/\$defs\/([^"]+)"/g)) if (dep[1] !== name) visit(dep[1]!);
      delete schemas[name];
      schemas[name] = relink(def) as Json;
    };
    visit(id);
  }
  // The Error object's `code` is one of ERROR_CODES; `status` is an HTTP status code.
  const error = schemas.Error as { properties: Record<string, Json> };
  error.properties.code = { ...error.properties.code, enum: Object.keys(ERROR_CODES) };
  error.properties.status = { ...error.properties.status, minimum: 400, maximum: 599 };
  return schemas;
}

/** A header as the document writes it: its documentation without the name it is keyed by. */
export const headerObject = ({ name: _name, text: _text, ...doc }: HeaderDoc): Json => doc;

/** The header components: every named header (contract/headers.ts), in its order. */
export const headerComponents = (): Record<string, Json> =>
  Object.fromEntries(Object.entries(RESPONSE_HEADERS).map(([id, h]) => [id, headerObject(h)]));

/**
 * Error responses every operation can give, by status, with the codes each may carry. The 403 depends on what the
 * operation does (a read-only key is refused only where it changes data): lib/api/openapi-envelope.ts.
 */
export const COMMON_ERRORS: readonly ErrorResponseSpec[] = [
  {
    status: 401,
    description:
      'The API key is missing or invalid (`unauthorized`), or expired less than a day ago (`key_expired`, whose message says when; after a day, `unauthorized`).',
    codes: ['unauthorized', 'key_expired'],
    headers: [
      {
        name: 'WWW-Authenticate',
        description:
          '`Bearer` when the gateway rejects the key; `Bearer error="invalid_token"` with a description for an expired key.',
        required: false,
        schema: { type: 'string' },
      },
    ],
  },
  {
    status: 429,
    description:
      'Rate limit or daily quota exceeded, or the key is temporarily banned for ignoring limits. Wait for Retry-After, then back off exponentially.',
    codes: ['rate_limited', 'quota_exceeded', 'key_banned'],
    headers: ['Retry-After'],
  },
  { status: 500, description: 'Unexpected error.', codes: ['internal_error'] },
  {
    status: 503,
    description: 'The service is temporarily unavailable. Retry after Retry-After seconds.',
    codes: ['service_unavailable'],
    headers: ['Retry-After'],
  },
];
