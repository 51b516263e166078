/**
 * The operations the bench measures, from the route table: each route's sample request (contract/route-types.ts)
 * and its named variants, with the function bundle that answers it and the status it answers, and the authorizer
 * beside them. Every phase takes its operations from here, so a new route is measured everywhere with no edit of
 * the bench; the table requires its sample, so the compiler names it. Only the floors' requests are written per
 * operation (bench/floors.ts, keyed by operationId: the compiler names a new one's): they are the floor.
 */
import { AUTHORIZER, ROUTES, type RequestSample, type Route } from '../../contract/routes.ts';
import { handlerModule } from '../../lib/config/lambda-entries.ts';
import { lambdaName } from './bundle.ts';

/** One request the bench sends: a route's sample, or one of its variants. */
export interface BenchOp {
  /** Its name in the tables: the operationId, or `<operationId>?<variant>` (`listPets?status`). */
  readonly op: string;
  readonly route: Route;
  readonly sample: RequestSample;
  /** The variant's name; absent for the route's own sample. */
  readonly variant?: string;
  /** The function's bundle (its handler file's base name, as the bundles phase names it). */
  readonly bundle: string;
  /** The status a healthy invocation answers. */
  readonly expect: number;
  /** It makes an item (its route `creates`), so it allocates an id: the phases count those writes per create. */
  readonly creates: boolean;
}

/** A function's bundle name: `getPet` → `get-pet`, `authorizer` → `authorizer`. */
export const bundleOf = (fn: string): string => lambdaName(handlerModule(fn));

/** The status a route's sample answers: its success, or the 501 of an operation whose contract is not specified. */
export function expectedStatus(route: Route): number {
  if (route.success) return route.success.status;
  if (route.notImplemented) return 501;
  throw new Error(`${route.operationId}: neither a success nor a 501 to expect of its sample`);
}

/**
 * Every route's sample, each followed by its variants, in the route table's order. The phases send one seeded item
 * (EXISTING_ITEM) in every call of an operation, which a delete would remove at its first call and answer 404 after:
 * a route that `deletes` is refused by name until the phases give each of its calls an item of its own.
 */
export function benchOpsOf(routes: readonly Route[]): BenchOp[] {
  return routes.flatMap((route) => {
    if (!route.sample) throw new Error(`${route.operationId}: no sample request for the bench to send`);
    if (route.does === 'deletes')
      throw new Error(
        `${route.operationId} deletes: the bench's phases send one seeded item in every call, so all but the first ` +
          'would answer 404; give each of its calls an item of its own (seedItems past the shared ids) before measuring it',
      );
    return [
      { op: route.operationId, sample: route.sample },
      ...Object.entries(route.sampleVariants ?? {}).map(([variant, sample]) => ({
        op: `${route.operationId}?${variant}`,
        sample,
        variant,
      })),
    ].map((o) => ({
      ...o,
      route,
      bundle: bundleOf(route.operationId),
      expect: expectedStatus(route),
      creates: route.does === 'creates',
    }));
  });
}

/** The route table's requests: what every phase measures. */
export const ROUTE_OPS: readonly BenchOp[] = benchOpsOf(ROUTES);

/**
 * Which requests each phase measures: the in-process handlers every one; the warm path and the cost phase each but a
 * 501's (the floor server would do nothing for it but count, and it has no storage request of its own to cost).
 */
export const MEASURED_BY = {
  handlers: (_o: BenchOp) => true,
  warm: (o: BenchOp) => !o.route.notImplemented,
  cost: (o: BenchOp) => !o.route.notImplemented,
} as const;

/** The authorizer, which the bench invokes like a function of its own; it answers with a policy, not a status. */
export const AUTHORIZER_OP = { op: AUTHORIZER.name, bundle: bundleOf(AUTHORIZER.name), expect: 'allow' } as const;

/** A sample's path parameters, `existingId` (an item the bench seeded in every table of items) for each EXISTING_ITEM. */
export function paramsOf(sample: RequestSample, existingId: number): Record<string, string> {
  return Object.fromEntries(
    Object.entries(sample.params ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : String(existingId)]),
  );
}

/** The request as an HTTP client sends it, below the base path: `/pets?limit=20`, `/pets/42`. */
export function httpRequestOf(o: BenchOp, existingId: number): { method: string; path: string; body?: string } {
  const params = paramsOf(o.sample, existingId);
  const qs = new URLSearchParams(o.sample.query ?? {}).toString();
  return {
    method: o.route.method,
    path: `${pathOf(o.route, params)}${qs ? `?${qs}` : ''}`,
    ...(o.sample.body === undefined ? {} : { body: JSON.stringify(o.sample.body) }),
  };
}

/** The route's path with its parameters filled in. */
export const pathOf = (route: Route, params: Readonly<Record<string, string>>): string =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
