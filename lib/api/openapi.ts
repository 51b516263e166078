/**
 * The OpenAPI 3.1 document, generated from the zod schemas (contract/schemas.ts), the route table
 * (contract/routes.ts), the error codes (contract/errors.ts) and the plans. Never hand-written: `npm run openapi`
 * writes it to /openapi.json, and test/contract/openapi.test.ts fails when the committed file is stale.
 *
 * Plain data, no CDK and no Lambda runtime imports (the schemas module imports zod only).
 */
import * as z from 'zod/mini';
import { ERROR_CODES } from '../../contract/errors.ts';
import { ErrorObject } from '../../contract/schemas.ts';
import { PLANS, STANDARD_PLANS } from '../../contract/plans.ts';
import { BASE_PATH, ROUTES, type ErrorResponseSpec, type Route } from '../../contract/routes.ts';
import { infoDescription } from './overview.ts';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

/**
 * Base URLs. lib/config/stages.ts did not carry public base URLs when this was written: these are placeholders
 * that follow the spec's shape ({base_url}, {staging_base_url}, both ending in the version segment).
 */
export const SERVERS = [
  { url: `https://api.example.com${BASE_PATH}`, description: 'Production ({base_url})' },
  { url: `https://staging.api.example.com${BASE_PATH}`, description: 'Staging ({staging_base_url})' },
] as const;

type Json = Record<string, unknown>;

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

const isZod = (s: unknown): s is z.ZodMiniType => typeof s === 'object' && s !== null && '_zod' in s;
const idOf = (schema: unknown): string | undefined =>
  isZod(schema) ? (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id : undefined;

/** The id a schema is registered with; `what` names the place in the error when it has none. */
export const named = (schema: unknown, what: string): string => {
  const id = idOf(schema);
  if (!id) throw new Error(`${what}: the schema lacks .meta({ id }), so the document cannot name it`);
  return id;
};

/** A documented parameter's schema may be a named zod schema: it becomes a `$ref` to that component. */
const isNamedSchema = (s: unknown): boolean => idOf(s) !== undefined;

/**
 * The component schemas: every named zod schema the route entries use (documented parameters, request bodies,
 * success bodies) and the Error object, with the named schemas each uses, as JSON Schema 2020-12 (OpenAPI 3.1's
 * dialect). Request bodies are converted as input (unknown fields of a NewPet are ignored, so it must not forbid
 * them), the rest as output. Ordered as a reader meets them (parameters, request bodies, responses), each after
 * the schemas it uses.
 */
function componentSchemas(routes: readonly Route[]): Record<string, Json> {
  const inputs = new Set<unknown>();
  const roots: unknown[] = [];
  for (const r of routes) for (const p of r.parameters ?? []) if (isNamedSchema(p.schema)) roots.push(p.schema);
  for (const r of routes)
    if (r.request.body) {
      named(r.request.body, `${r.operationId} request body`);
      roots.push(r.request.body);
      inputs.add(r.request.body);
    }
  for (const r of routes)
    if (r.success) {
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

const int = (description: string, example?: number): Json => ({
  description,
  required: true,
  schema: { type: 'integer', minimum: 0, ...(example !== undefined ? { example } : {}) },
});

const HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': int(
    `The limit currently applying (requests per minute or per day, whichever binds sooner). Plans: ${STANDARD_PLANS.map((p) => `${PLANS[p].displayName} ${PLANS[p].limits!.perMinute}/min, ${PLANS[p].limits!.perDay}/day`).join('; ')}. \`0\` on errors the gateway answers before a key is known.`,
    60,
  ),
  'X-RateLimit-Remaining': int('Requests left in the current window.', 59),
  'X-RateLimit-Reset': int('Unix timestamp (seconds) at which the window resets.', 1767225660),
  'Retry-After': int('Seconds to wait before retrying (then back off exponentially).', 30),
  Location: {
    description: 'Path of the created animal.',
    required: true,
    schema: { type: 'string', example: `${BASE_PATH}/pets/1001` },
  },
  LinkNext: {
    description:
      'RFC 8288 link to the next page, present only when a further page may exist: `<' +
      `${BASE_PATH}/pets?limit=…&status=…&cursor=…>; rel="next"\`. The cursor is opaque, signed, bound to the status filter and expires after 24 hours. ` +
      'The last page has no next link; a page that fills `limit` exactly may announce a next page that turns out empty.',
    required: false,
    schema: { type: 'string' },
  },
};

/** Error responses every operation can give, by status, with the codes each may carry. */
type CommonErrorSpec = ErrorResponseSpec & { readonly extraHeaders?: Record<string, Json> };

const COMMON_ERRORS: readonly CommonErrorSpec[] = [
  {
    status: 401,
    description: 'The API key is missing or invalid.',
    codes: ['unauthorized'],
    extraHeaders: {
      'WWW-Authenticate': {
        description: '`Bearer` when the gateway rejects the key.',
        required: false,
        schema: { type: 'string' },
      },
    },
  },
  {
    status: 403,
    description: 'The API key may not call this operation (not on a usage plan for this stage).',
    codes: ['forbidden'],
  },
  {
    status: 429,
    description:
      'Rate limit or daily quota exceeded, or the key is temporarily banned for ignoring limits. Wait for Retry-After, then back off exponentially.',
    codes: ['rate_limited', 'quota_exceeded', 'key_banned'],
    retryAfter: true,
  },
  { status: 500, description: 'Unexpected error.', codes: ['internal_error'] },
  {
    status: 503,
    description: 'The service is temporarily unavailable. Retry after Retry-After seconds.',
    codes: ['service_unavailable'],
    retryAfter: true,
  },
];

function deprecationHeaders(route: Route, required: boolean): Record<string, Json> {
  const d = route.deprecation;
  if (!d) return {};
  return {
    Deprecation: {
      description: `RFC 9745: \`@${Math.floor(Date.parse(d.deprecatedAt) / 1000)}\` (deprecated since ${d.deprecatedAt}).`,
      required,
      schema: { type: 'string', pattern: '^@[0-9]+$' },
    },
    Sunset: {
      description: `RFC 8594: \`${new Date(d.sunsetAt).toUTCString()}\`, when the operation is removed (410 from then on).`,
      required,
      schema: { type: 'string' },
    },
    Link: {
      description: `The successor: \`<${BASE_PATH}${d.successor}>; rel="successor-version"\`.`,
      required,
      schema: { type: 'string' },
    },
  };
}

function rateLimitHeaders(retryAfter: boolean): Record<string, Json> {
  return {
    'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
    'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
    'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
    ...(retryAfter ? { 'Retry-After': ref('headers', 'Retry-After') } : {}),
  };
}

const jsonContent = (schema: string, example?: unknown) => ({
  'application/json': { schema: ref('schemas', schema), ...(example !== undefined ? { example } : {}) },
});

/**
 * Whether the operation's Lambda answers this status (so the response carries the deprecation headers): every
 * status its entry declares, and 500; the other common errors may come from the gateway.
 */
const fromFunction = (route: Route, status: number): boolean =>
  status === 500 || route.errors.some((e) => e.status === status);

function errorResponse(route: Route, e: CommonErrorSpec): Json {
  const first = e.codes[0]!;
  return {
    description: `${e.description} Codes: ${e.codes.map((c) => `\`${c}\``).join(', ')}.`,
    headers: {
      ...rateLimitHeaders(e.retryAfter ?? false),
      ...(e.extraHeaders ?? {}),
      ...deprecationHeaders(route, fromFunction(route, e.status)),
    },
    content: jsonContent('Error', { code: first, message: ERROR_CODES[first].message, status: e.status }),
  };
}

const SUCCESS_HEADERS = { LinkNext: 'Link', Location: 'Location' } as const;

function successResponse(route: Route): [string, Json] | undefined {
  const ok = route.success;
  if (!ok) return undefined;
  const headers: Record<string, Json> = { ...rateLimitHeaders(false) };
  for (const h of ok.headers ?? []) headers[SUCCESS_HEADERS[h]] = ref('headers', h);
  Object.assign(headers, deprecationHeaders(route, true));
  const schema = named(ok.schema, `${route.operationId} ${ok.status} response`);
  return [String(ok.status), { description: ok.description, headers, content: jsonContent(schema) }];
}

const fromMeta = (s: z.ZodMiniType): string | undefined =>
  (z.globalRegistry.get(s) as { description?: string } | undefined)?.description;

const TAGS: Record<string, string> = { pets: 'Animals in the store.', store: 'Store operations.' };
const tagOf = (route: Route) => (route.path.startsWith('/store') ? 'store' : 'pets');

function operation(route: Route): Json {
  const d = route.deprecation;
  const responses: Record<string, Json> = {};
  const success = successResponse(route);
  if (success) responses[success[0]] = success[1];
  const errors = [...route.errors, ...COMMON_ERRORS].sort((a, b) => a.status - b.status);
  for (const e of errors) responses[String(e.status)] = errorResponse(route, e);

  let description = route.description ?? `${route.summary}.`;
  if (d) {
    description =
      `${description} **Deprecated** since ${d.deprecatedAt.slice(0, 10)}; removed on ${d.sunsetAt.slice(0, 10)} (sunset ${new Date(d.sunsetAt).toUTCString()}), ` +
      `after which it answers 410 \`endpoint_removed\`. Use ${d.instead} instead.`;
  }
  if (route.notImplemented)
    description = `${route.summary}. Not implemented: the route exists with the same authentication, limits and headers as every other, and answers 501 \`not_implemented\` until its contract is specified.`;

  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    description,
    tags: [tagOf(route)],
    security: [{ bearerAuth: [] }],
  };
  if (route.parameters)
    op.parameters = route.parameters.map((p) =>
      isNamedSchema(p.schema) ? { ...p, schema: ref('schemas', idOf(p.schema)!) } : p,
    );
  const body = route.request.body;
  if (body) {
    const name = named(body, `${route.operationId} request body`);
    op.requestBody = {
      required: true,
      description: fromMeta(body as z.ZodMiniType),
      content: jsonContent(name, route.example),
    };
  }
  op.responses = responses;
  if (d) {
    op.deprecated = true;
    op['x-deprecated-at'] = d.deprecatedAt;
    op['x-sunset'] = d.sunsetAt;
    op['x-successor'] = `${BASE_PATH}${d.successor}`;
  }
  if (route.notImplemented) op['x-not-implemented'] = true;
  return op;
}

/** Builds the document. Deterministic: the same inputs give byte-identical JSON. */
export function buildOpenApi(routes: readonly Route[] = ROUTES): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const r of routes) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Animal Store API',
      version: API_VERSION,
      description: infoDescription(),
      contact: { name: 'Animal Store team', url: 'https://api.example.com/docs' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: SERVERS.map((s) => ({ ...s })),
    security: [{ bearerAuth: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key: `Authorization: Bearer <API_KEY>`.' },
      },
      schemas: componentSchemas(routes),
      headers: HEADERS,
    },
  };
}

/** The document as committed: two-space JSON with a trailing newline. */
export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}
