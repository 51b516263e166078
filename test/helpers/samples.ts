/**
 * One sample request per operation and what a user with a good key gets for it. The bundle, auth-fuzz and
 * integration tests take their per-operation requests from here, so a new operation is named by the compiler
 * (`satisfies Record<OperationId, …>`) instead of being found by reading those tests. They also send them one way:
 * `proxyEventOf` makes the Lambda event a function is invoked with, `requestInit` the fetch of the local gateway
 * (or the deployed API), `clientCall` the typed client's call, so a header a sample carries reaches every test
 * without teaching each one.
 *
 * Each sample owns its data: what it names (a pet) is made for that one request by the fixtures, which send the
 * sample of the operation that creates it (`make('createPet')`) the caller's way (fixturesSending), so a sample
 * that changes or deletes what it names never breaks another sample, and a new resource needs no fixture of its own.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AnimalStoreClient } from '../../client/index.ts';
import { ROUTES, resourcePaths, type HttpMethod, type OperationId, type Route } from '../../contract/routes.ts';
import { proxyEvent } from '../../lib/local/lambda.ts';

/** What the samples make their data with. */
export interface SampleFixtures {
  /** A new item, made by the sample of the operation that creates it, for one sample request alone; its id. */
  make(creator: OperationId): Promise<number>;
}

/** For requests refused before anything is looked up (no key, 401): the ids they name need not exist. */
export const PLACEHOLDER_FIXTURES: SampleFixtures = { make: async () => 1 };

/**
 * Fixtures that make an item by sending its creator's sample the test's own way (`send`: the local gateway, the
 * typed client, a bundle), reading the id from the answer's body.
 */
export function fixturesSending(send: (r: SampleRequest) => Promise<unknown>): SampleFixtures {
  const fixtures: SampleFixtures = {
    async make(creator) {
      const body = (await send(await sampleRequest(routeOf(creator), fixtures))) as { id?: unknown } | undefined;
      if (typeof body?.id !== 'number') throw new Error(`${creator}'s sample made nothing: ${JSON.stringify(body)}`);
      return body.id;
    },
  };
  return fixtures;
}

const routeOf = (operationId: OperationId) => ROUTES.find((r) => r.operationId === operationId)!;

export interface OperationSample {
  /** The path parameters of the sample request, made with the fixtures. */
  readonly params?: (fixtures: SampleFixtures) => Promise<Readonly<Record<string, string>>>;
  readonly query?: Readonly<Record<string, string>>;
  /** The request headers the operation declares (a fresh value each time: a sample owns its data). */
  readonly headers?: () => Readonly<Record<string, string>>;
  /** The JSON body, sent as application/json. */
  readonly body?: unknown;
  /** The status a user with a good key gets for this request. */
  readonly status: number;
}

export const OPERATION_SAMPLES = {
  listPets: { query: { limit: '5' }, status: 200 },
  createPet: {
    headers: () => ({ 'Idempotency-Key': `sample-${randomUUID()}` }),
    body: { name: 'Sample', categoryId: 1 },
    status: 201,
  },
  getPet: { params: async (f) => ({ petId: String(await f.make('createPet')) }), status: 200 },
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
  /** The headers as sent, credentials aside: the sample's own, and Content-Type with a body. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as sent, when the operation takes one. */
  readonly body?: string;
  readonly status: number;
}

/** A route's sample request, its data made with `fixtures` (a fresh item for each request that names one). */
export async function sampleRequest(
  route: Route & { readonly operationId: OperationId },
  fixtures: SampleFixtures,
): Promise<SampleRequest> {
  const sample: OperationSample = OPERATION_SAMPLES[route.operationId];
  const pathParameters = (await sample.params?.(fixtures)) ?? {};
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
    headers: { ...sample.headers?.(), ...(sample.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(sample.body === undefined ? {} : { body: JSON.stringify(sample.body) }),
    status: sample.status,
  };
}

/**
 * A sample as the fetch of an HTTP request to the API (`${url}${r.path}`): its method, headers and body, with the
 * key as a bearer token when given, and `headers` over the sample's (other credentials, say).
 */
export function requestInit(
  r: SampleRequest,
  opts: { key?: string; headers?: Record<string, string> } = {},
): RequestInit {
  return {
    method: r.method,
    headers: { ...r.headers, ...(opts.key ? { Authorization: `Bearer ${opts.key}` } : {}), ...opts.headers },
    ...(r.body === undefined ? {} : { body: r.body }),
  };
}

/**
 * A sample as a call of the typed client (`client.raw`, openapi-fetch, typed from the document): the route's
 * template with its path and query parameters, its headers and its body, as a client program would send it.
 */
export function clientCall(
  client: AnimalStoreClient,
  r: SampleRequest,
): Promise<{ response: Response; data?: unknown }> {
  const call = client.raw[r.method as 'GET'] as unknown as (
    path: string,
    init: unknown,
  ) => Promise<{ response: Response; data?: unknown }>;
  const { 'Content-Type': _json, ...header } = r.headers;
  return call(r.resourcePath, {
    params: { path: r.pathParameters, query: r.query, header },
    ...(r.body === undefined ? {} : { body: JSON.parse(r.body) as unknown }),
  });
}

/** A sample as the event API Gateway invokes its function with, after the authorizer allowed it. */
export function proxyEventOf(r: SampleRequest, authorizer: Record<string, unknown>): APIGatewayProxyEvent {
  return proxyEvent({
    requestId: randomUUID(),
    method: r.method,
    resourcePath: r.resourcePath,
    path: r.path.split('?')[0]!,
    stage: 'v1',
    rawHeaders: Object.entries(r.headers).flat(),
    search: new URLSearchParams(r.query),
    pathParameters: r.pathParameters,
    body: Buffer.from(r.body ?? ''),
    sourceIp: '127.0.0.1',
    protocol: 'HTTP/1.1',
    authorizer,
  });
}

/** Every operation's sample request, each with data of its own. */
export const sampleRequests = (fixtures: SampleFixtures): Promise<SampleRequest[]> =>
  Promise.all(ROUTES.map((r) => sampleRequest(r, fixtures)));

/** A concrete path for each resource (`{param}` → `1`), with its `Allow` header as the gateway sends it on 405. */
export function resourcesWithAllow(): { path: string; template: string; methods: HttpMethod[]; allow: string }[] {
  return [...resourcePaths()].map(([template, methods]) => ({
    template,
    path: template.replace(/\{\w+\}/g, '1'),
    methods,
    allow: methods.join(', '),
  }));
}

/** Methods a resource may lack (HEAD and OPTIONS aside: the gateway answers those on its own terms). */
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * A resource with a method no route declares on it, from the route table: what a test of the gateway's 405 sends,
 * so that declaring that method one day moves the test to another, instead of breaking it.
 */
export function undeclaredMethod(): { path: string; method: HttpMethod; allow: string } {
  for (const r of resourcesWithAllow()) {
    const method = METHODS.find((m) => !r.methods.includes(m));
    if (method) return { path: r.path, method, allow: r.allow };
  }
  throw new Error('every resource declares every method: no 405 to test');
}
