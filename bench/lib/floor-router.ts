/**
 * The node:http floor's routing (bench/floor-server.ts), from the route table: a request's method and path (below
 * the base path) name an operation by its path template and method, as the gateway routes them, and the operation
 * names its floor (bench/floors.ts). A route with no floor is refused when the router is made, naming the file that
 * needs it, so a new operation is never measured against a 404.
 */
import { matchPath, type Route } from '../../contract/routes.ts';
import type { OperationFloor } from '../floors.ts';

export type FloorRoute =
  | { readonly route: Route; readonly floor: OperationFloor; readonly params: Readonly<Record<string, string>> }
  /** No route has the path (404), or none of its routes the method (405). */
  | { readonly status: 404 | 405 };

export function floorRouter(
  routes: readonly Route[],
  floors: Readonly<Record<string, OperationFloor | undefined>>,
): (method: string, path: string) => FloorRoute {
  const missing = routes.filter((r) => !floors[r.operationId]).map((r) => r.operationId);
  if (missing.length) throw new Error(`no floor for ${missing.join(', ')}: add it to FLOORS in bench/floors.ts`);
  return (method, path) => {
    const match = matchPath(path, routes);
    if (!match) return { status: 404 };
    const route = routes.find((r) => r.path === match.template && r.method === method);
    return route ? { route, floor: floors[route.operationId]!, params: match.params } : { status: 405 };
  };
}
