/**
 * One sample request per operation and what a user with a good key gets for it. The bundle, auth-fuzz,
 * integration and browser tests take their per-operation requests from here, so a new operation is named by the
 * compiler (`satisfies Record<OperationId, …>`) instead of being found by reading those tests.
 */
import { ROUTES, resourcePaths, type HttpMethod, type OperationId, type Route } from '../../contract/routes.ts';

/** A pet the sample requests may name (the tests create it first). */
export interface SampleWorld {
  readonly petId: number;
}

export interface OperationSample {
  /** The path parameters of the sample request. */
  readonly params?: (world: SampleWorld) => Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
  /** The JSON body, sent as application/json. */
  readonly body?: unknown;
  /** The status a user with a good key gets for this request (the world's pet existing). */
  readonly status: number;
}

export const OPERATION_SAMPLES = {
  listPets: { query: { limit: '5' }, status: 200 },
  createPet: { body: { name: 'Sample', categoryId: 1 }, status: 201 },
  getPet: { params: (w) => ({ petId: String(w.petId) }), status: 200 },
  listOrders: { status: 501 },
} as const satisfies Record<OperationId, OperationSample>;

/** A route's sample as a concrete request below the base path. */
export interface SampleRequest {
  readonly operationId: OperationId;
  readonly method: HttpMethod;
  /** The route's path template (API Gateway's resource path). */
  readonly resourcePath: string;
  /** The concrete path with its query string. */
  readonly path: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** The body as sent, when the operation takes one. */
  readonly body?: string;
  readonly status: number;
}

export function sampleRequest(route: Route & { readonly operationId: OperationId }, world: SampleWorld): SampleRequest {
  const sample: OperationSample = OPERATION_SAMPLES[route.operationId];
  const pathParameters = sample.params?.(world) ?? {};
  const query = sample.query ?? {};
  const qs = new URLSearchParams(query).toString();
  return {
    operationId: route.operationId,
    method: route.method,
    resourcePath: route.path,
    path:
      route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathParameters[name]!)) +
      (qs ? `?${qs}` : ''),
    pathParameters,
    query,
    ...(sample.body === undefined ? {} : { body: JSON.stringify(sample.body) }),
    status: sample.status,
  };
}

/** Every operation's sample request. */
export const sampleRequests = (world: SampleWorld): SampleRequest[] => ROUTES.map((r) => sampleRequest(r, world));

/** A concrete path for each resource (`{param}` → `1`), with its `Allow` header as the gateway sends it on 405. */
export function resourcesWithAllow(): { path: string; template: string; methods: HttpMethod[]; allow: string }[] {
  return [...resourcePaths()].map(([template, methods]) => ({
    template,
    path: template.replace(/\{\w+\}/g, '1'),
    methods,
    allow: methods.join(', '),
  }));
}
