/**
 * Validates a response against the OpenAPI document (the committed openapi.json, which test/contract proves equal
 * to what the code generates): the status is declared for the operation, the content type is the declared one, the
 * declared required headers are present and well-formed, and the body matches the schema (ajv, JSON Schema 2020-12).
 * Error bodies must also carry a known code whose status is the HTTP status.
 *
 * Requests to paths no route matches (gateway 404) or with a method the resource lacks (gateway 405) belong to no
 * operation: they are checked against the Error schema (and the rate-limit headers) only.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { BASE_PATH, ROUTES, matchPath } from '../../contract/routes.ts';
import { ERROR_CODES } from '../../contract/errors.ts';

type Json = Record<string, unknown>;
interface HeaderObject {
  required?: boolean;
  schema?: { type?: string; pattern?: string; example?: unknown };
}
interface ResponseObject {
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, { schema: Json }>;
}

const DOC_ID = 'https://animal-store.example/openapi.json';
export const openapiDoc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, ResponseObject> }>>;
  components: { headers: Record<string, HeaderObject>; schemas: Record<string, Json> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
const addFormats = addFormatsModule as unknown as (a: Ajv2020) => void;
addFormats(ajv);
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
// The whole document as one schema resource, so `#/components/schemas/…` refs resolve inside it.
ajv.addSchema({ ...openapiDoc, $id: DOC_ID });

const validators = new Map<string, ValidateFunction>();
function validatorFor(schema: Json): ValidateFunction {
  // Component refs are resolved against the document; inline schemas are compiled as they are.
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    const rebased = JSON.parse(key.replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as Json;
    v = ajv.compile(rebased);
    validators.set(key, v);
  }
  return v;
}

function deref<T>(o: T | { $ref: string }): T {
  if (o && typeof o === 'object' && '$ref' in o) {
    const name = o.$ref.split('/').pop()!;
    return openapiDoc.components.headers[name] as T;
  }
  return o as T;
}

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

export interface Exchange {
  readonly method: string;
  /** Path below the base path, with an optional query string (as given to `call()`). */
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  /** The raw body text. */
  readonly body: string;
}

/** Which operation (if any) a request maps to. */
export function operationFor(
  method: string,
  path: string,
): { operationId: string; template: string } | 'unknown-path' | 'method-not-allowed' {
  const pathname = new URL(path, 'http://x').pathname;
  let match: ReturnType<typeof matchPath>;
  try {
    match = matchPath(pathname);
  } catch {
    return 'unknown-path';
  }
  if (!match) return 'unknown-path';
  const route = ROUTES.find((r) => r.path === match.template && r.method === method.toUpperCase());
  return route ? { operationId: route.operationId, template: route.path } : 'method-not-allowed';
}

const fail = (x: Exchange, what: string): never => {
  throw new ContractViolation(
    `${x.method} ${BASE_PATH}${x.path} → ${x.status}: ${what}\nbody: ${x.body.slice(0, 500)}`,
  );
};

function checkHeaders(x: Exchange, declared: Record<string, HeaderObject | { $ref: string }>): void {
  for (const [name, h0] of Object.entries(declared)) {
    const h = deref<HeaderObject>(h0);
    const value = x.headers.get(name);
    if (value === null) {
      if (h.required) fail(x, `required header ${name} is missing`);
      continue;
    }
    if (h.schema?.type === 'integer' && !/^-?[0-9]+$/.test(value))
      fail(x, `header ${name} is not an integer: "${value}"`);
    if (h.schema?.pattern && !new RegExp(h.schema.pattern).test(value))
      fail(x, `header ${name} does not match ${h.schema.pattern}: "${value}"`);
  }
}

function checkBody(x: Exchange, content: Record<string, { schema: Json }> | undefined): void {
  if (x.method.toUpperCase() === 'HEAD') return;
  if (!content) {
    if (x.body.length) fail(x, 'a body was sent where none is declared');
    return;
  }
  const ct = (x.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const media = content[ct];
  if (!media) fail(x, `content type "${ct}" is not one of ${Object.keys(content).join(', ')}`);
  let body: unknown;
  try {
    body = JSON.parse(x.body);
  } catch {
    return fail(x, 'the body is not valid JSON');
  }
  const v = validatorFor(media!.schema);
  if (!v(body)) fail(x, `the body does not match the schema: ${ajv.errorsText(v.errors)}`);
  if (x.status >= 400) checkErrorCode(x, body as { code: string; status: number });
}

function checkErrorCode(x: Exchange, body: { code: string; status: number }): void {
  const known = (ERROR_CODES as Record<string, { status: number }>)[body.code];
  if (!known) fail(x, `unknown error code ${body.code}`);
  if (known!.status !== x.status || body.status !== x.status)
    fail(
      x,
      `error code ${body.code} (status ${known!.status}, body.status ${body.status}) does not match HTTP ${x.status}`,
    );
}

const RATE_LIMIT_HEADERS = [
  ...['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map(
    (n) => [n, { $ref: `#/components/headers/${n}` }] as const,
  ),
  ['x-amzn-RequestId', { $ref: '#/components/headers/RequestId' }] as const,
];
const ERROR_ONLY: ResponseObject = {
  headers: Object.fromEntries(RATE_LIMIT_HEADERS),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** Throws a ContractViolation when the exchange does not conform to the document. */
export function assertConforms(x: Exchange): void {
  const op = operationFor(x.method, x.path);
  if (op === 'unknown-path' || op === 'method-not-allowed') {
    const expected = op === 'unknown-path' ? 404 : 405;
    if (x.status !== expected) fail(x, `expected the gateway's ${expected} for a request that matches no operation`);
    checkHeaders(x, ERROR_ONLY.headers!);
    if (op === 'method-not-allowed' && !x.headers.get('allow')) fail(x, '405 without an Allow header');
    return checkBody(x, ERROR_ONLY.content);
  }
  const operation = openapiDoc.paths[op.template]?.[x.method.toLowerCase()];
  if (!operation) return fail(x, `${op.operationId} is missing from openapi.json`);
  const response = operation.responses[String(x.status)];
  if (!response)
    fail(
      x,
      `status ${x.status} is not declared for ${op.operationId} (declared: ${Object.keys(operation.responses).join(', ')})`,
    );
  checkHeaders(x, response!.headers ?? {});
  checkBody(x, response!.content);
}

/** Validates a fetch Response without consuming it. */
export async function checkResponse(method: string, path: string, res: Response): Promise<void> {
  const body = await res.clone().text();
  assertConforms({ method: method.toUpperCase(), path, status: res.status, headers: res.headers, body });
}

/**
 * The headers the document requires on one response of an operation, each with its example value: a response a
 * test builds from this conforms whatever the operation's shape, so no test restates an operation's headers.
 */
export function documentedHeaders(template: string, method: string, status: number): Record<string, string> {
  const response = openapiDoc.paths[template]![method.toLowerCase()]!.responses[String(status)]!;
  const out: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, h0] of Object.entries(response.headers ?? {})) {
    const h = deref<HeaderObject>(h0);
    if (h.required) out[name] = String(h.schema?.example ?? (h.schema?.type === 'integer' ? 0 : 'x'));
  }
  return out;
}
