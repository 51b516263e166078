/**
 * The smoke checks, in the order they run. Safe against production: without `--write` the only keyed requests are
 * one list page and one getPet (2 requests of the key's quota); the unauthenticated ones (one per operation of the
 * route table, and one undeclared method) are answered by the gateway before any function runs. The keyed checks
 * are written per operation: each checks what only that operation shows (the deprecation headers, a read-back). `--write` adds one create (with an Idempotency-Key) and its read-back.
 */
import { randomUUID } from 'node:crypto';
import type { AnimalStoreClient } from '../../client/index.ts';
import { ROUTES, resourcePaths, type HttpMethod } from '../../contract/routes.ts';
import { CheckFailed, expectError, fail, rateLimitHeaders, type Seen } from './probe.ts';
import { ROUTE_WRITE_CHECKS } from './route-checks.ts';

export interface SmokeContext {
  /** The stage's base URL, ending in the version segment (`…/v1`), no trailing slash. */
  readonly base: string;
  readonly client: AnimalStoreClient;
  /** The recording fetch, for requests the typed client cannot make (no key, unknown paths, other methods). */
  readonly fetch: typeof fetch;
  /** Every response so far. */
  readonly seen: readonly Seen[];
  readonly now: () => number;
  /** A pet id the list returned, for getPet. */
  petId?: number;
}

export interface Check {
  readonly name: string;
  /** Only with `--write`. */
  readonly writes?: boolean;
  /** Resolves to a short detail on success; throws (CheckFailed or a network error) on failure. */
  run(ctx: SmokeContext): Promise<string>;
}

/** A route's path with each `{param}` filled (with 1: the gateway answers before anything looks it up). */
const concrete = (template: string) => template.replace(/\{\w+\}/g, '1');
/** Methods a resource may lack (HEAD and OPTIONS aside: the gateway answers those on its own terms). */
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** An id far beyond any allocated one: getPet answers 404 with the deprecation headers still on. */
const UNLIKELY_PET_ID = Number.MAX_SAFE_INTEGER;

export const CHECKS: readonly Check[] = [
  {
    name: '401 without a key (Error object)',
    async run(ctx) {
      // Answered by the gateway before any function runs: free, and it proves every route is deployed.
      for (const r of ROUTES) {
        const res = await ctx.fetch(`${ctx.base}${concrete(r.path)}`, { method: r.method });
        await expectError(res, 401, 'unauthorized');
      }
      return `401 unauthorized on all ${ROUTES.length} operations of the route table`;
    },
  },
  {
    name: 'listPets with the key, X-RateLimit-* headers',
    async run(ctx) {
      const page = await ctx.client.listPets({ limit: 1 });
      if (page.error) fail(`expected 200, got ${page.response.status} ${page.error.code}: ${page.error.message}`);
      if (!Array.isArray(page.data)) fail('the body is not a JSON array');
      const rl = rateLimitHeaders(page.response.headers);
      if (rl.limit < 1) fail(`X-RateLimit-Limit is ${rl.limit} on a counted request`);
      if (rl.remaining > rl.limit) fail(`X-RateLimit-Remaining ${rl.remaining} exceeds the limit ${rl.limit}`);
      if (rl.reset * 1000 < ctx.now() - 5_000) fail(`X-RateLimit-Reset ${rl.reset} is in the past`);
      ctx.petId = page.data![0]?.id;
      return `200, ${page.data!.length} pet(s); limit ${rl.limit}, remaining ${rl.remaining}, resets in ${Math.max(0, Math.round(rl.reset - ctx.now() / 1000))} s`;
    },
  },
  {
    name: 'getPet deprecation headers (Deprecation, Sunset, Link successor)',
    async run(ctx) {
      const id = ctx.petId ?? UNLIKELY_PET_ID;
      const r = await ctx.client.getPet(id); // deprecated, and that is what this checks
      const status = r.response.status;
      if (![200, 404, 410].includes(status))
        fail(`expected 200, 404 or 410, got ${status}${r.error ? ` ${r.error.code}` : ''}`);
      const h = r.response.headers;
      const deprecation = h.get('Deprecation');
      const sunset = h.get('Sunset');
      const link = h.get('Link');
      if (!deprecation || !/^@\d+$/.test(deprecation))
        fail(
          `Deprecation is ${deprecation === null ? 'missing' : `"${deprecation}"`}, expected @<unix seconds> (RFC 9745)`,
        );
      if (!sunset || Number.isNaN(Date.parse(sunset)))
        fail(`Sunset is ${sunset === null ? 'missing' : `"${sunset}"`}, expected an HTTP date (RFC 8594)`);
      if (!link || !/rel="?successor-version"?/.test(link))
        fail(`Link is ${link === null ? 'missing' : `"${link}"`}, expected rel="successor-version"`);
      return `${status}; Deprecation ${deprecation}, Sunset ${sunset}`;
    },
  },
  {
    name: 'gateway 404 on an unknown path (Error object)',
    async run(ctx) {
      const res = await ctx.fetch(`${ctx.base}/smoke-no-such-path`);
      await expectError(res, 404, 'not_found');
      return '404 not_found';
    },
  },
  {
    name: 'gateway 405 on an unsupported method (Error object, Allow)',
    async run(ctx) {
      // A resource and a method the route table does not declare on it, sent without a key.
      const [path, declared] = [...resourcePaths()].find(([, m]) => m.length < METHODS.length)!;
      const method = METHODS.find((m) => !declared.includes(m))!;
      const res = await ctx.fetch(`${ctx.base}${concrete(path)}`, { method });
      await expectError(res, 405, 'method_not_allowed');
      const allow = res.headers.get('Allow') ?? '';
      if (allow.split(/,\s*/).sort().join() !== [...declared].sort().join())
        fail(`Allow is "${allow}" on ${method} ${path}, expected ${declared.join(', ')}`);
      return `405 method_not_allowed on ${method} ${path}, Allow: ${allow}`;
    },
  },
  {
    name: 'createPet and read-back',
    writes: true,
    async run(ctx) {
      const name = `smoke-test ${new Date(ctx.now()).toISOString()}`;
      const created = await ctx.client.createPet({ name, categoryId: 1 }, { idempotencyKey: randomUUID() });
      if (created.error)
        fail(`create: expected 201, got ${created.response.status} ${created.error.code}: ${created.error.message}`);
      if (created.response.status !== 201) fail(`create: expected 201, got ${created.response.status}`);
      if (!created.location) fail('create: Location is missing');
      const read = await ctx.client.getPet(created.data!.id); // the only read by id
      if (read.error) fail(`read-back of ${created.data!.id}: got ${read.response.status} ${read.error.code}`);
      if (read.data!.name !== name)
        fail(`read-back of ${created.data!.id}: name is "${read.data!.name}", expected "${name}"`);
      return `created pet ${created.data!.id} ("${name}") at ${created.location}, read back`;
    },
  },
  ...ROUTE_WRITE_CHECKS,
  {
    name: 'x-amzn-RequestId on every response',
    async run(ctx) {
      if (!ctx.seen.length) fail('no response to look at');
      const missing = ctx.seen.filter((s) => !s.headers.get('x-amzn-RequestId'));
      if (missing.length)
        fail(`missing on ${missing.map((s) => `${s.method} ${new URL(s.url).pathname} (${s.status})`).join(', ')}`);
      return `present on all ${ctx.seen.length} responses`;
    },
  },
];

export { CheckFailed };
