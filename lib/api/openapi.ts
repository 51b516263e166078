/**
 * The OpenAPI 3.1 document, generated from the zod schemas (contract/schemas.ts), the route table
 * (contract/routes.ts), the error codes (contract/errors.ts) and the plans. Never hand-written: `npm run openapi`
 * writes it to /openapi.json, and test/contract/openapi.test.ts fails when the committed file is stale.
 *
 * Plain data, no CDK and no Lambda runtime imports (the schemas module imports zod only).
 */
import { TAGS } from '../../contract/tags.ts';
import { globalRegistry, type ZodMiniType } from 'zod/mini';
import { ERROR_CODES } from '../../contract/errors.ts';
import { headerDoc } from '../../contract/headers.ts';
import { BASE_PATH, ROUTES, type ErrorResponseSpec, type ResponseHeader, type Route } from '../../contract/routes.ts';
import {
  COMMON_ERRORS,
  componentSchemas,
  headerComponents,
  headerObject,
  named,
  ref,
  type Json,
} from './openapi-components.ts';
import { envelopeErrors, envelopeNotes } from './openapi-envelope.ts';
import { parameterSchemas, parameters } from './openapi-parameters.ts';
import { infoDescription } from './overview.ts';

export { named } from './openapi-components.ts';

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

/** The stages' base URLs (lib/config/stages.ts carries no public domain: these are the names clients are given). */
export const SERVERS = [
  { url: `https://api.example.com${BASE_PATH}`, description: 'Production' },
  {
    url: `https://staging.api.example.com${BASE_PATH}`,
    description: 'Staging: the same API ahead of production, with its own keys and data',
  },
] as const;

function deprecationHeaders(route: Route, required: boolean): Record<string, Json> {
  const d = route.deprecation;
  if (!d) return {};
  const at = `@${Math.floor(Date.parse(d.deprecatedAt) / 1000)}`;
  const sunset = new Date(d.sunsetAt).toUTCString();
  const link = `<${BASE_PATH}${d.successor}>; rel="successor-version"`;
  return {
    Deprecation: {
      description: `RFC 9745: \`${at}\` (deprecated since ${d.deprecatedAt}).`,
      required,
      schema: { type: 'string', pattern: '^@[0-9]+$', example: at },
    },
    Sunset: {
      description: `RFC 8594: \`${sunset}\`, when the operation is removed (410 from then on).`,
      required,
      schema: { type: 'string', example: sunset },
    },
    Link: {
      description: `The successor: \`${link}\`.`,
      required,
      schema: { type: 'string', example: link },
    },
  };
}

/** The headers every response carries: the rate-limit ones and API Gateway's request id. */
const everyResponseHeaders = (): Record<string, Json> => ({
  'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset'),
  'x-amzn-RequestId': ref('headers', 'RequestId'),
});

/** A response's own headers: a named one is a component; one only this response sends is documented in place. */
function ownHeaders(headers: readonly ResponseHeader[] = []): Record<string, Json> {
  return Object.fromEntries(
    headers.map((h) => [headerDoc(h).name, typeof h === 'string' ? ref('headers', h) : headerObject(headerDoc(h))]),
  );
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

function errorResponse(route: Route, e: ErrorResponseSpec): Json {
  const first = e.codes[0]!;
  return {
    description: `${e.description} Codes: ${e.codes.map((c) => `\`${c}\``).join(', ')}.`,
    headers: {
      ...everyResponseHeaders(),
      ...ownHeaders(e.headers),
      ...deprecationHeaders(route, fromFunction(route, e.status)),
    },
    content: jsonContent('Error', { code: first, message: ERROR_CODES[first].message, status: e.status }),
  };
}

function successResponse(route: Route): [string, Json] | undefined {
  const ok = route.success;
  if (!ok) return undefined;
  const headers = { ...everyResponseHeaders(), ...ownHeaders(ok.headers), ...deprecationHeaders(route, true) };
  const response: Json = { description: ok.description, headers };
  if (ok.schema) response.content = jsonContent(named(ok.schema, `${route.operationId} ${ok.status} response`));
  return [String(ok.status), response];
}

const fromMeta = (s: ZodMiniType): string | undefined =>
  (globalRegistry.get(s) as { description?: string } | undefined)?.description;

/**
 * Each operation is tagged with the first segment of its path, described in contract/tags.ts (test/contract/
 * openapi.test.ts fails on a tag of the route table without a description there).
 */
export const tagOf = (route: Route) => route.path.split('/')[1]!;
const describedTag = (name: string) => ({ name, ...(TAGS[name] ? { description: TAGS[name] } : {}) });

/**
 * Refuses an operation's own error response of a status every operation gives already (COMMON_ERRORS): the document
 * has one response per status, so one of the two would be dropped. The 403 and the envelope's are merged instead
 * (openapi-envelope.ts), as an operation may refuse a key of its own accord.
 */
function refuseCommonStatuses(route: Route): void {
  for (const e of route.errors)
    if (COMMON_ERRORS.some((c) => c.status === e.status))
      throw new Error(
        `${route.operationId} declares a ${e.status} response, which every operation gives already ` +
          `(COMMON_ERRORS, lib/api/openapi-components.ts): leave it out of the entry, or give its codes to the common one`,
      );
}

function operation(route: Route): Json {
  const d = route.deprecation;
  const responses: Record<string, Json> = {};
  const success = successResponse(route);
  if (success) responses[success[0]] = success[1];
  refuseCommonStatuses(route);
  const errors = [...envelopeErrors(route), ...COMMON_ERRORS].sort((a, b) => a.status - b.status);
  for (const e of errors) {
    // Two responses of one status: the later would replace the earlier without a word.
    if (responses[String(e.status)])
      throw new Error(`${route.operationId}: two responses of status ${e.status}; an operation gives one per status`);
    responses[String(e.status)] = errorResponse(route, e);
  }

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
  const params = parameters(route);
  if (params.length) op.parameters = params;
  const body = route.request.body;
  if (body) {
    const name = named(body, `${route.operationId} request body`);
    op.requestBody = {
      required: true,
      description: [fromMeta(body as ZodMiniType), envelopeNotes.body].filter(Boolean).join(' '),
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
  const tags = [...new Set(routes.map(tagOf))];
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
    tags: tags.map(describedTag),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key: `Authorization: Bearer <API_KEY>`.' },
      },
      schemas: componentSchemas(routes, routes.flatMap(parameterSchemas)),
      headers: headerComponents(),
    },
  };
}

/** The document as committed: two-space JSON with a trailing newline. */
export function renderOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}
