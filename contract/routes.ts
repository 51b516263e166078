/**
 * The route table: one entry per operation. The CDK stack, the local gateway, the OpenAPI document and the
 * benchmarks all read it, so they cannot drift. Plain data, no CDK imports.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/** Which table actions an operation needs; the stack grants exactly these. */
export type TableAccess = 'none' | 'read' | 'write' | 'readWrite';

export interface Deprecation {
  /** When the operation was deprecated (sent as `Deprecation: @<epoch>`, RFC 9745). */
  readonly deprecatedAt: string;
  /** When it is removed (sent as `Sunset`, RFC 8594); from then on it answers 410. */
  readonly sunsetAt: string;
  /** The successor (sent as `Link: <…>; rel="successor-version"`), relative to the base path. */
  readonly successor: string;
}

export interface Route {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** Path below the base path `/v1`, with `{param}` placeholders as API Gateway writes them. */
  readonly path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly summary: string;
  readonly pets: TableAccess;
  readonly deprecation?: Deprecation;
  /** True for operations whose contract the spec has not shown yet (they answer 501). */
  readonly notImplemented?: boolean;
}

export const BASE_PATH = '/v1';

export const ROUTES: readonly Route[] = [
  {
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    entry: 'lambdas/handlers/list-pets.ts',
    summary: 'List all animals',
    pets: 'read',
  },
  {
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    entry: 'lambdas/handlers/create-pet.ts',
    summary: 'Add an animal',
    pets: 'write',
  },
  {
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    entry: 'lambdas/handlers/get-pet.ts',
    summary: 'Get one animal (deprecated: use GET /pets with the status filter)',
    pets: 'read',
    deprecation: {
      deprecatedAt: '2026-01-01T00:00:00Z',
      sunsetAt: '2030-12-05T00:00:00Z',
      successor: '/pets?status=available',
    },
  },
  {
    operationId: 'listOrders',
    method: 'GET',
    path: '/store/orders',
    entry: 'lambdas/handlers/list-orders.ts',
    summary: 'List store orders (contract not yet specified)',
    pets: 'none',
    notImplemented: true,
  },
];

/** The authorizer is not a route but is bundled and deployed like one. */
export const AUTHORIZER_ENTRY = 'lambdas/handlers/authorizer.ts';

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
