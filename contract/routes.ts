/**
 * The route table: one entry per operation (each in contract/operations/). The CDK stack, the local gateway, the
 * OpenAPI document and the benchmarks all read it, so they cannot drift. Plain data, no CDK imports.
 * A function imports only its own entry, so its bundle carries no other operation's documentation.
 */
import { KEYS_TABLE, STATE_TABLE } from './tables.ts';
import type { FunctionAccess, HttpMethod, RequestSample, Route } from './route-types.ts';
import { CREATE_PET } from './operations/create-pet.ts';
import { GET_PET } from './operations/get-pet.ts';
import { LIST_ORDERS } from './operations/list-orders.ts';
import { LIST_PETS } from './operations/list-pets.ts';

export type {
  Deprecation,
  ErrorResponseSpec,
  FunctionAccess,
  HeaderDoc,
  HttpMethod,
  OperationEffect,
  RequestSample,
  RequestSchemas,
  ResponseHeader,
  Route,
  SuccessResponseSpec,
  TableGrant,
} from './route-types.ts';

export { BASE_PATH, EXISTING_ITEM, writes } from './route-types.ts';

/** A route of the table: with the sample request the benchmarks send, which a test's own route may leave out. */
type TableRoute = Route & { readonly sample: RequestSample };

const ROUTE_TABLE = [LIST_PETS, CREATE_PET, GET_PET, LIST_ORDERS] as const satisfies readonly TableRoute[];

/** The operations, checked by the compiler wherever one is named. */
export type OperationId = (typeof ROUTE_TABLE)[number]['operationId'];

/** Every operation, for code that walks them all. */
export const ROUTES: readonly (TableRoute & { readonly operationId: OperationId })[] = ROUTE_TABLE;

/** The authorizer is not a route but is bundled and deployed like one (its handler: lambdas/handlers/authorizer.ts). */
export const AUTHORIZER = {
  name: 'authorizer',
  access: {
    tables: [
      // The key record and its standing (banned, day spent) in one BatchGetItem (lambdas/storage/standing.ts).
      { table: KEYS_TABLE, actions: ['dynamodb:BatchGetItem'] },
      // A spent key's first Deny of the day, and the ban of one that keeps sending, are written on its standing.
      // That is a few writes a key a day at most, whatever it sends.
      { table: STATE_TABLE, actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'] },
    ],
  },
} as const satisfies { name: string; access: FunctionAccess };

/**
 * Each create (a route that `creates` and answers 201) paired with the read of what it made (`<its path>/{id}`).
 * The stateful test and the smoke's write check exercise every pair.
 */
export function createAndRead(routes: readonly Route[] = ROUTES): { create: Route; read: Route }[] {
  return routes.flatMap((create) =>
    create.does === 'creates' && create.success?.status === 201
      ? routes
          .filter((read) => read.does === 'reads' && new RegExp(`^${create.path}/\\{\\w+\\}$`).test(read.path))
          .map((read) => ({ create, read }))
      : [],
  );
}

/** Distinct resource paths, each with the methods it supports (for 405 + Allow). */
export function resourcePaths(routes: readonly Route[] = ROUTES): Map<string, HttpMethod[]> {
  const byPath = new Map<string, HttpMethod[]>();
  for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
  return byPath;
}

let templates: string[] | undefined;

/** Matches a concrete path (below the base path) against the route templates. */
export function matchPath(
  path: string,
  routes: readonly Route[] = ROUTES,
): { template: string; params: Record<string, string> } | undefined {
  const parts = path.split('/').filter(Boolean);
  for (const template of routes === ROUTES
    ? (templates ??= [...resourcePaths(ROUTES).keys()])
    : resourcePaths(routes).keys()) {
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
