/**
 * The shape of a route entry: everything known about one operation (request schemas, responses, table access,
 * deprecation), and the base path of every route. The entries are in operations/, listed by routes.ts.
 */
import type { ErrorCode } from './errors.ts';
import type { ResponseHeaderName } from './header-names.ts';
import type { TableDefinition } from './tables.ts';

/** Both stages' base path; every route's path is below it. */
export const BASE_PATH = '/v1';

/** A route's path on the wire: the base path and its template, each `{param}` replaced by its value as one segment. */
export function pathOf(route: { readonly path: string }, params: Readonly<Record<string, unknown>> = {}): string {
  return (
    BASE_PATH +
    route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined || value === null) throw new Error(`${route.path}: no value for {${name}}`);
      return encodeURIComponent(String(value));
    })
  );
}

/**
 * The `Location` of what a create made: the create's path with the new id below it. That is the path of the read
 * the route table pairs with it (createAndRead, contract/routes.ts), so no resource's Location is written by hand.
 */
export function locationOf(
  create: { readonly path: string },
  params: Readonly<Record<string, unknown>> | undefined,
  id: number | string,
): string {
  return `${pathOf(create, params)}/${encodeURIComponent(String(id))}`;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface Deprecation {
  /** When the operation was deprecated (sent as `Deprecation: @<epoch>`, RFC 9745). */
  readonly deprecatedAt: string;
  /** When it is removed (sent as `Sunset`, RFC 8594); from then on it answers 410. */
  readonly sunsetAt: string;
  /** The successor (sent as `Link: <…>; rel="successor-version"`), relative to the base path. */
  readonly successor: string;
  /** What clients use instead, as the documents say it ("Use … instead."). */
  readonly instead: string;
}

/** One IAM grant on a table (or one of its indexes): exactly the DynamoDB actions the storage adapters call. */
export interface TableGrant {
  readonly table: TableDefinition;
  /** A GSI name: the grant applies to `<table arn>/index/<name>` instead of the table. */
  readonly index?: string;
  readonly actions: readonly `dynamodb:${string}`[];
  /**
   * The function's writes to this table may run inside a TransactWriteItems. IAM grants the writes themselves.
   * The table's alarms also watch that operation, which DynamoDB reports apart. @default false
   */
  readonly transactional?: boolean;
}

/** What a function may touch. The stack grants exactly these and nothing else. */
export interface FunctionAccess {
  readonly tables: readonly TableGrant[];
  /** May read the pagination-cursor signing secret (GetSecretValue on it; its ARN as CURSOR_SECRET_ARN). */
  readonly cursorSecret?: boolean;
}

/** The zod schemas a request is validated with; types, validation and the OpenAPI document all derive from them. */
export interface RequestSchemas {
  /**
   * A zod object of the query parameters. A parameter it does not name is refused (400, naming it), like an unknown
   * body field; an operation without one takes no query parameters at all.
   */
  readonly query?: unknown;
  readonly params?: unknown;
  /**
   * A zod object of the request headers the operation reads, keyed by documented name (`Idempotency-Key`).
   * The envelope reads them in any case and refuses one given twice, missing (unless optional) or invalid (400
   * `validation_failed`). The handler gets the parsed values as `event.validated.headers`; others pass unchecked.
   */
  readonly headers?: unknown;
  /**
   * Registered with an id (`meta(schema, { id })`, contract/schemas.ts), so the document names it in its components.
   * A schema only this operation uses belongs in the entry's own file.
   */
  readonly body?: unknown;
}

/** An error response an operation can give beyond the common ones (401, 403, 429, 500, 503), by status. */
export interface ErrorResponseSpec {
  readonly status: number;
  readonly description: string;
  readonly codes: readonly ErrorCode[];
  /** Headers beyond the rate-limit ones (e.g. `Retry-After`), documented like a success response's. */
  readonly headers?: readonly ResponseHeader[];
}

/** A response header as documented (its OpenAPI header object) and as the docs tables name it. */
export interface HeaderDoc {
  /** The name on the wire. */
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
  readonly schema: Readonly<Record<string, unknown>>;
  /** How the docs tables write it (e.g. `` `Link: rel="next"` ``); the name in backticks when absent. */
  readonly text?: string;
}

/**
 * A response header: one of the named headers of contract/headers.ts (a component of the document), or
 * a header only this operation sends, documented in place.
 */
export type ResponseHeader = ResponseHeaderName | HeaderDoc;

interface SuccessBase {
  readonly description: string;
  /** Headers beyond the rate-limit ones. */
  readonly headers?: readonly ResponseHeader[];
}

/** A success with a JSON body. */
export interface SuccessWithBody extends SuccessBase {
  readonly status: 200 | 201 | 202;
  /** The body's zod schema, registered with an id: the document collects it and the named schemas it uses. */
  readonly schema: unknown;
}

/** A success without a body (no Content-Type either). */
export interface SuccessWithoutBody extends SuccessBase {
  readonly status: 204;
  readonly schema?: undefined;
}

export type SuccessResponseSpec = SuccessWithBody | SuccessWithoutBody;

/** A path parameter's value in a sample that must name an item that exists (the sender gives one it made). */
export const EXISTING_ITEM = { existing: true } as const;

/**
 * The smallest valid request of an operation that answers its usual status (its success, or a 501).
 * The benchmarks send it, so they cover the route table's operations (bench/lib/bench-ops.ts).
 * Values are as on the wire; a body is sent as application/json.
 */
export interface RequestSample {
  readonly params?: Readonly<Record<string, string | typeof EXISTING_ITEM>>;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/**
 * What an operation does to the store. The pre-traffic check, the post-traffic bake and the read-only scope derive
 * from it, never from the HTTP method: a read may be a POST, and a DELETE is a change.
 * - `reads`: changes nothing; any key may send it again and again.
 * - `creates`: makes a new item that belongs to the caller and nothing else.
 * - `readsOwnUsage`: reads what the limiter counted for the caller's key. Its own call must be in the answer, so
 *   the envelope counts it before the handler runs and hands the count over (`event.counted`).
 * - `changes`, `deletes`: alter or remove an item that exists, which may be a customer's.
 */
export type OperationEffect = 'reads' | 'readsOwnUsage' | 'creates' | 'changes' | 'deletes';

/** Whether the operation changes the store (every effect but the reads). */
export const writes = (route: { readonly does: OperationEffect }): boolean =>
  route.does !== 'reads' && route.does !== 'readsOwnUsage';

export interface Route {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** What it does to the store (OperationEffect). */
  readonly does: OperationEffect;
  /** Path below the base path `/v1`, with `{param}` placeholders as API Gateway writes them. */
  readonly path: string;
  readonly summary: string;
  /** The OpenAPI description; the summary when absent. */
  readonly description?: string;
  /** Validation, the handler's input types and the document's parameters (from each field's meta) all come from it. */
  readonly request: RequestSchemas;
  /** An example request body for the document. */
  readonly example?: unknown;
  /**
   * A valid request the benchmarks send. contract/routes.ts requires one, so the compiler flags a new operation
   * without it. A test's own route may leave it out.
   */
  readonly sample?: RequestSample;
  /**
   * Requests that take another path through the function, benchmarked apart as `<operationId>?<name>`.
   * For example, listPets' status filter reads an index where the plain list scans.
   */
  readonly sampleVariants?: Readonly<Record<string, RequestSample>>;
  readonly success?: SuccessResponseSpec;
  readonly errors: readonly ErrorResponseSpec[];
  readonly access: FunctionAccess;
  readonly deprecation?: Deprecation;
  /** True for operations whose contract the spec has not shown yet (they answer 501). */
  readonly notImplemented?: boolean;
}
