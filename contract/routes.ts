/**
 * The route table: one entry per operation. The CDK stack, the local gateway, the OpenAPI document and the
 * benchmarks all read it, so they cannot drift. Plain data, no CDK imports.
 */
import { ListPetsQuery, MAX_BODY_BYTES, NewPet, PAGE_SIZE, PetIdParam } from './schemas.ts';
import { KEYS_TABLE, PETS_TABLE, STATE_TABLE } from './tables.ts';
import type { ErrorCode } from './errors.ts';

import type { ErrorResponseSpec, FunctionAccess, HttpMethod, Route, TableGrant } from './route-types.ts';

export type {
  Deprecation,
  ErrorResponseSpec,
  FunctionAccess,
  HttpMethod,
  ParameterDoc,
  RequestSchemas,
  Route,
  SuccessResponseSpec,
  TableGrant,
} from './route-types.ts';

export const BASE_PATH = '/v1';

/** Every operation runs the rate limiter: conditional UpdateItem on its window item. */
const RATE_LIMITER: TableGrant = { table: STATE_TABLE, actions: ['dynamodb:UpdateItem'] };

const badRequest = (codes: readonly ErrorCode[], description: string): ErrorResponseSpec => ({
  status: 400,
  description,
  codes: [...codes, 'bad_request'],
});

const GET_PET_SUNSET = '2030-12-05T00:00:00Z';

const ROUTE_TABLE = [
  {
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    entry: 'lambdas/functions/list-pets.ts',
    summary: 'List all animals',
    description:
      'Returns a page of animals (a bare array), optionally filtered by status. Follow `Link: rel="next"` for further pages.',
    request: { query: ListPetsQuery },
    parameters: [
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Maximum number of animals returned (${PAGE_SIZE.min} to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}).`,
        schema: { type: 'integer', minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default },
      },
      {
        name: 'status',
        in: 'query',
        required: false,
        description: 'Filters by availability.',
        schema: { $ref: '#/components/schemas/PetStatus' },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description:
          'Opaque cursor taken from the previous page\'s `Link: rel="next"`; use that link as is. It is bound to the status filter and expires after 24 hours.',
        schema: { type: 'string', minLength: 1, maxLength: 2048 },
      },
    ],
    success: {
      status: 200,
      description: 'A page of animals, in a stable order; further pages are announced in `Link: rel="next"`.',
      schema: 'Pets',
      headers: ['LinkNext'],
    },
    errors: [
      badRequest(
        ['validation_failed', 'invalid_cursor'],
        'Invalid query parameters, or a forged, expired or mismatched cursor (`invalid_cursor`).',
      ),
    ],
    access: {
      tables: [
        RATE_LIMITER,
        { table: PETS_TABLE, actions: ['dynamodb:Scan'] },
        { table: PETS_TABLE, index: PETS_TABLE.indexes[0].indexName, actions: ['dynamodb:Query'] },
      ],
      cursorSecret: true,
    },
  },
  {
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    entry: 'lambdas/functions/create-pet.ts',
    summary: 'Add an animal',
    description:
      'Adds an animal. Send an `Idempotency-Key` to make retries safe: a retry with the same key and body returns the first result.',
    request: { body: NewPet },
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes the create safe to retry: the same key with the same body returns the first result (201, same id); with another body 422; while the first is in flight 409.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    ],
    example: { name: 'Rex', categoryId: 1, status: 'available' },
    success: {
      status: 201,
      description: 'The created animal, with the id the service assigned.',
      schema: 'Pet',
      headers: ['Location'],
    },
    errors: [
      badRequest(
        ['validation_failed', 'invalid_json'],
        'The body is missing, not valid JSON, or has missing or invalid fields.',
      ),
      {
        status: 409,
        description: 'A request with the same Idempotency-Key is still in progress.',
        codes: ['idempotency_in_progress'],
      },
      { status: 413, description: `The body is larger than ${MAX_BODY_BYTES} bytes.`, codes: ['payload_too_large'] },
      { status: 415, description: 'The body is not sent as application/json.', codes: ['unsupported_media_type'] },
      {
        status: 422,
        description: 'The Idempotency-Key was used before with a different body.',
        codes: ['idempotency_key_reused'],
      },
    ],
    // PutItem of the pet (also inside the idempotent-create transaction); the id-block counter and the transaction's
    // record update are UpdateItems on the state table, like the limiter's; an Idempotency-Key is claimed with a
    // conditional PutItem and released with a DeleteItem.
    access: {
      tables: [
        RATE_LIMITER,
        { table: PETS_TABLE, actions: ['dynamodb:PutItem'] },
        { table: STATE_TABLE, actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'] },
      ],
    },
  },
  {
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    entry: 'lambdas/functions/get-pet.ts',
    summary: 'Get one animal (deprecated: use GET /pets with the status filter)',
    request: { params: PetIdParam },
    parameters: [
      {
        name: 'petId',
        in: 'path',
        required: true,
        description: 'Identifier of the animal to retrieve.',
        // Any int64 (one the service never assigned answers 404). No minimum/maximum: the int64 bounds are not exact
        // JSON numbers in JavaScript, and format int64 states them.
        schema: { type: 'integer', format: 'int64' },
      },
    ],
    success: { status: 200, description: 'The animal.', schema: 'Pet' },
    errors: [
      badRequest(['validation_failed'], 'The petId is not a 64-bit integer (int64) in decimal.'),
      { status: 404, description: 'No animal has this id.', codes: ['not_found'] },
      {
        status: 410,
        description: `The operation was removed at its sunset (${GET_PET_SUNSET}).`,
        codes: ['endpoint_removed'],
      },
    ],
    access: { tables: [RATE_LIMITER, { table: PETS_TABLE, actions: ['dynamodb:GetItem'] }] },
    deprecation: {
      deprecatedAt: '2026-01-01T00:00:00Z',
      sunsetAt: GET_PET_SUNSET,
      successor: '/pets?status=available',
    },
  },
  {
    operationId: 'listOrders',
    method: 'GET',
    path: '/store/orders',
    entry: 'lambdas/functions/list-orders.ts',
    summary: 'List store orders (contract not yet specified)',
    request: {},
    errors: [
      {
        status: 501,
        description: 'The operation exists but its contract is not specified yet.',
        codes: ['not_implemented'],
      },
    ],
    access: { tables: [RATE_LIMITER] },
    notImplemented: true,
  },
] as const satisfies readonly Route[];

/** The operations, checked by the compiler wherever one is named. */
export type OperationId = (typeof ROUTE_TABLE)[number]['operationId'];

/** Every operation, for code that walks them all. */
export const ROUTES: readonly (Route & { readonly operationId: OperationId })[] = ROUTE_TABLE;

/** The route of one operation, with its exact request schemas (so a handler's input types follow its route). */
export type RouteOf<I extends OperationId> = Extract<(typeof ROUTE_TABLE)[number], { readonly operationId: I }>;

export function routeOf<I extends OperationId>(operationId: I): RouteOf<I> {
  return ROUTE_TABLE.find((r) => r.operationId === operationId) as RouteOf<I>;
}

/** The authorizer is not a route but is bundled and deployed like one. */
export const AUTHORIZER = {
  name: 'authorizer',
  entry: 'lambdas/functions/authorizer.ts',
  access: { tables: [{ table: KEYS_TABLE, actions: ['dynamodb:GetItem'] }] },
} as const satisfies { name: string; entry: string; access: FunctionAccess };

/** The authorizer's handler module. */
export const AUTHORIZER_ENTRY = AUTHORIZER.entry;

/** Distinct resource paths, each with the methods it supports (for 405 + Allow). */
export function resourcePaths(routes: readonly Route[] = ROUTES): Map<string, HttpMethod[]> {
  const byPath = new Map<string, HttpMethod[]>();
  for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
  return byPath;
}

const TEMPLATES = [...resourcePaths(ROUTES).keys()];

/** Matches a concrete path (below the base path) against the route templates. */
export function matchPath(
  path: string,
  routes: readonly Route[] = ROUTES,
): { template: string; params: Record<string, string> } | undefined {
  const parts = path.split('/').filter(Boolean);
  for (const template of routes === ROUTES ? TEMPLATES : resourcePaths(routes).keys()) {
    const tParts = template.split('/').filter(Boolean);
    if (tParts.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = tParts.every((t, i) => {
      const m = /^\{(\w+)\}$/.exec(t);
      if (m) {
        params[m[1]!] = decodeURIComponent(parts[i]!);
        return true;
      }
      return t === parts[i];
    });
    if (ok) return { template, params };
  }
  return undefined;
}
