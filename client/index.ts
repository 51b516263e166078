/**
 * A small typed client for the Animal Store API, built on the types generated from openapi.json
 * (client/schema.d.ts, `npm run openapi`) and openapi-fetch.
 *
 *   const store = createAnimalStoreClient({ baseUrl: 'https://api.example.com/v1', apiKey: process.env.API_KEY! });
 *   const { data: pet, error } = await store.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: crypto.randomUUID() });
 *   for await (const p of store.listAllPets({ status: 'available' })) console.log(p.id, p.name);
 *
 * Retries (spec section 8): 429 and 5xx (except 501) are retried up to `maxAttempts` in all, waiting at least
 * Retry-After and backing off exponentially with jitter. A POST is retried after a 5xx only when it carries an
 * Idempotency-Key (otherwise a retry could create a second animal); a 429 is always safe to retry (nothing was done).
 * A Retry-After longer than `maxRetryAfterMs` (e.g. a key ban) is not waited for: the 429 is returned.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ApiErrorBody = components['schemas']['Error'];
export type ListPetsQuery = NonNullable<paths['/pets']['get']['parameters']['query']>;

export interface RetryOptions {
  /** Attempts in all, including the first (default 4; 1 = no retry). */
  readonly maxAttempts?: number;
  /** First backoff step (default 250 ms), doubled each retry. */
  readonly baseDelayMs?: number;
  /** Cap of one backoff step (default 30 s). */
  readonly maxDelayMs?: number;
  /** Longest Retry-After the client waits for (default 65 s); beyond it the response is returned. */
  readonly maxRetryAfterMs?: number;
  /** Injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Injectable for tests: [0, 1). */
  readonly random?: () => number;
  /** Called before each wait. */
  readonly onRetry?: (info: { attempt: number; status: number; delayMs: number }) => void;
}

export interface AnimalStoreClientOptions {
  /** Base URL including the version segment, e.g. `https://api.example.com/v1`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch?: typeof fetch;
  readonly retry?: RetryOptions;
}

/** Thrown by `listAllPets` (the other methods return `{ data, error }`). */
export class AnimalStoreError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(body: ApiErrorBody) {
    super(`${body.status} ${body.code}: ${body.message}`);
    this.name = 'AnimalStoreError';
    this.status = body.status;
    this.code = body.code;
  }
}

export type Result<T> =
  { data: T; error?: undefined; response: Response } | { data?: undefined; error: ApiErrorBody; response: Response };

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After as seconds or an HTTP date → milliseconds (undefined when absent or unreadable). */
export function retryAfterMs(value: string | null, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Whether a response may be retried: 429 always; 5xx but 501 for idempotent requests (or a POST with a key). */
export function isRetryable(status: number, method: string, hasIdempotencyKey: boolean): boolean {
  if (status === 429) return true;
  if (status < 500 || status === 501) return false;
  return method !== 'POST' || hasIdempotencyKey;
}

/** The delay before retry number `retry` (1-based): at least Retry-After, plus an exponential step with full jitter. */
export function backoffMs(
  retry: number,
  retryAfter: number | undefined,
  o: Required<Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'>>,
): number {
  const step = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (retry - 1));
  const jitter = Math.floor(o.random() * step);
  return retryAfter !== undefined ? retryAfter + jitter : Math.max(jitter, Math.floor(step / 2));
}

/** A fetch that retries per the rules above. */
export function retryingFetch(base: typeof fetch, r: RetryOptions = {}): (req: Request) => Promise<Response> {
  const o = {
    maxAttempts: Math.max(1, r.maxAttempts ?? 4),
    baseDelayMs: r.baseDelayMs ?? 250,
    maxDelayMs: r.maxDelayMs ?? 30_000,
    maxRetryAfterMs: r.maxRetryAfterMs ?? 65_000,
    sleep: r.sleep ?? sleepReal,
    random: r.random ?? Math.random,
  };
  return async (req: Request) => {
    const hasKey = req.headers.has('Idempotency-Key');
    for (let attempt = 1; ; attempt++) {
      const res = await base(attempt < o.maxAttempts ? req.clone() : req);
      if (attempt >= o.maxAttempts || !isRetryable(res.status, req.method, hasKey)) return res;
      const after = retryAfterMs(res.headers.get('Retry-After'));
      if (after !== undefined && after > o.maxRetryAfterMs) return res;
      const delayMs = backoffMs(attempt, after, o);
      r.onRetry?.({ attempt, status: res.status, delayMs });
      await res.body?.cancel();
      await o.sleep(delayMs);
    }
  };
}

/** The `rel="next"` target of a Link header, if any. */
export function nextLink(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (m && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?/i.test(m[2]!)) return m[1];
  }
  return undefined;
}

/**
 * openapi-fetch's answer as a Result. Success is the status's, not the body's: a 2xx without a body (a 204) is a
 * success whose data is undefined; an error without a JSON Error object (an empty body, a proxy's text page) still
 * gets one, with the status.
 */
export function result<T>(r: { data?: T; error?: unknown; response: Response }): Result<T> {
  if (!r.response.ok) {
    const error = (
      r.error && typeof r.error === 'object'
        ? r.error
        : { code: 'unknown', message: String(r.error || 'empty response'), status: r.response.status }
    ) as ApiErrorBody;
    return { error, response: r.response };
  }
  return { data: r.data as T, response: r.response };
}

export interface AnimalStoreClient {
  /**
   * The underlying openapi-fetch client (typed by the OpenAPI paths), for anything not wrapped here: every operation
   * of openapi.json is callable through it, and `result()` turns its answer into a Result.
   */
  readonly raw: Client<paths>;
  /** One page; `next` is the query of the following page, when the server announced one. */
  listPets(query?: ListPetsQuery): Promise<Result<Pet[]> & { next?: ListPetsQuery }>;
  createPet(pet: NewPet, opts?: { idempotencyKey?: string }): Promise<Result<Pet> & { location?: string }>;
  /** @deprecated GET /pets/{petId} is removed on 2030-12-05 (410 from then on): use listPets with a status filter. */
  getPet(petId: number): Promise<Result<Pet>>;
  /** Every pet matching the filter, following `Link: rel="next"` until the last page. Throws AnimalStoreError. */
  listAllPets(query?: Omit<ListPetsQuery, 'cursor'>): AsyncGenerator<Pet, void, undefined>;
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions): AnimalStoreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const baseFetch = options.fetch ?? globalThis.fetch;
  const raw = createClient<paths>({
    baseUrl,
    fetch: retryingFetch((req) => baseFetch(req), options.retry),
    headers: { Authorization: `Bearer ${options.apiKey}` },
  });
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');

  /** `/v1/pets?limit=…&cursor=…` (relative to the origin, as the server sends it) → the query for listPets. */
  function queryOf(link: string): ListPetsQuery {
    const url = new URL(link, `${baseUrl}/`);
    if (!url.pathname.endsWith('/pets') || (basePath && !url.pathname.startsWith(basePath)))
      throw new Error(`unexpected next link: ${link}`);
    const q: ListPetsQuery = {};
    const limit = url.searchParams.get('limit');
    const status = url.searchParams.get('status');
    const cursor = url.searchParams.get('cursor');
    if (limit !== null) q.limit = Number(limit);
    if (status !== null) q.status = status as PetStatus;
    if (cursor !== null) q.cursor = cursor;
    return q;
  }

  const client: AnimalStoreClient = {
    raw,
    async listPets(query = {}) {
      const r = result(await raw.GET('/pets', { params: { query } }));
      const link = nextLink(r.response.headers.get('Link'));
      return link && !r.error ? { ...r, next: queryOf(link) } : r;
    },
    async createPet(pet, opts = {}) {
      const r = result(
        await raw.POST('/pets', {
          body: pet,
          params: { header: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {} },
        }),
      );
      const location = r.response.headers.get('Location') ?? undefined;
      return location ? { ...r, location } : r;
    },
    async getPet(petId) {
      return result(await raw.GET('/pets/{petId}', { params: { path: { petId } } }));
    },
    async *listAllPets(query = {}) {
      let q: ListPetsQuery | undefined = { ...query };
      while (q) {
        const page: Awaited<ReturnType<AnimalStoreClient['listPets']>> = await client.listPets(q);
        if (page.error) throw new AnimalStoreError(page.error);
        yield* page.data;
        q = page.next;
      }
    },
  };
  return client;
}
