/** The OpenAPI document: generated, committed, current, lint-clean, and saying what the issue requires. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../contract/errors.ts';
import * as z from 'zod/mini';
import { BODY_ERRORS, LIMITER_GRANT, badRequest } from '../../contract/operations/common.ts';
import { ROUTES, type Route } from '../../contract/routes.ts';
import { Pet, PetIdParam, PetStatus, meta } from '../../contract/schemas.ts';
import { buildOpenApi, tagOf } from '../../lib/api/openapi.ts';
import { TAGS } from '../../contract/tags.ts';
import { CLIENT_TYPES_PATH, OPENAPI_PATH, ROOT, generate } from '../../scripts/openapi.ts';

type Json = Record<string, any>;
const doc = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Json;
const op = (path: string, method: string): Json => doc.paths[path][method];

describe('openapi.json', () => {
  it('is current: the committed document and client types equal what `npm run openapi` generates', async () => {
    const fresh = await generate();
    expect(readFileSync(OPENAPI_PATH, 'utf8'), 'openapi.json is stale: run `npm run openapi` and commit it').toBe(
      fresh.openapi,
    );
    expect(
      readFileSync(CLIENT_TYPES_PATH, 'utf8'),
      'client/schema.d.ts is stale: run `npm run openapi` and commit it',
    ).toBe(fresh.types);
  });

  it('passes Spectral (spectral:oas) with no errors and no warnings', async () => {
    const cli = `${ROOT}node_modules/@stoplight/spectral-cli/dist/index.js`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        cli,
        'lint',
        OPENAPI_PATH,
        '--ruleset',
        `${ROOT}.spectral.yaml`,
        '--format',
        'json',
        '--fail-severity',
        'error',
        '--quiet',
      ],
      { cwd: ROOT, maxBuffer: 10 * 1024 * 1024 },
    ).catch((e: { stdout?: string; message: string }) => ({ stdout: e.stdout || e.message }));
    const results = JSON.parse(stdout || '[]') as Array<{
      code: string;
      message: string;
      severity: number;
      path: string[];
    }>;
    // severity: 0 error, 1 warning, 2 info, 3 hint
    const problems = results
      .filter((r) => r.severity <= 1)
      .map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`);
    expect(problems).toEqual([]);
  });

  it('is OpenAPI 3.1, version 1.0.0, with production and staging servers ending in /v1', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toHaveLength(2);
    for (const s of doc.servers) expect(s.url).toMatch(/^https:\/\/.+\/v1$/);
    expect(doc.servers.map((s: Json) => s.description).join(' ')).toMatch(/Production.*Staging/);
  });

  it('describes every tag of the route table (contract/tags.ts)', () => {
    const undescribed = [...new Set(ROUTES.map(tagOf))].filter((t) => !TAGS[t]);
    expect(undescribed, 'describe these tags in contract/tags.ts').toEqual([]);
    for (const t of doc.tags) expect(t.description, t.name).toBe(TAGS[t.name]);
  });

  it('has one operation per route, each with bearer security, and the spec components', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const r of ROUTES) {
      const o = op(r.path, r.method.toLowerCase());
      expect(o.operationId).toBe(r.operationId);
      expect(o.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(Object.values(doc.paths).flatMap((methods) => Object.keys(methods as Json))).toHaveLength(ROUTES.length);
    // The spec's resources; the rest come from what the route entries name (tested below).
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Error', 'NewPet', 'Pet', 'PetStatus', 'Pets']),
    );
    expect(doc.components.schemas.PetStatus.enum).toEqual(['available', 'pending', 'sold']);
    expect(doc.components.schemas.Pet.required.sort()).toEqual(['categoryId', 'id', 'name', 'status']);
    expect(doc.components.schemas.NewPet.required.sort()).toEqual(['categoryId', 'name']);
    expect(doc.components.schemas.Error.properties.code.enum.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('declares X-RateLimit-* on every response, Retry-After on every 429 and 503', () => {
    for (const r of ROUTES) {
      for (const [status, res] of Object.entries(
        op(r.path, r.method.toLowerCase()).responses as Record<string, Json>,
      )) {
        for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
          expect(res.headers?.[h], `${r.operationId} ${status} ${h}`).toBeDefined();
        if (status === '429' || status === '503')
          expect(res.headers['Retry-After'], `${r.operationId} ${status}`).toBeDefined();
        if (Number(status) >= 400)
          expect(res.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it("declares each operation's responses: its entry's, the envelope's and the gateway's", () => {
    // What the gateway and the envelope answer for any operation; any operation refuses an undeclared query
    // parameter (400).
    const gateway = ['401', '403', '413', '429', '431', '500', '503'];
    const sorted = (s: string[]) => [...new Set(s)].sort();
    for (const r of ROUTES) {
      const own = [...(r.success ? [r.success.status] : []), ...r.errors.map((e) => e.status)].map(String);
      expect(Object.keys(op(r.path, r.method.toLowerCase()).responses), r.operationId).toEqual(
        sorted([...own, '400', ...gateway]),
      );
    }
    expect(op('/pets', 'post').responses['201'].headers.Location).toBeDefined();
    expect(op('/pets', 'get').responses['200'].headers.Link).toBeDefined();
    // Error responses declare their headers like successes: the 409 of an in-flight key says when to retry.
    expect(op('/pets', 'post').responses['409'].headers['Retry-After']).toEqual({
      $ref: '#/components/headers/Retry-After',
    });
    for (const r of ROUTES)
      for (const [status, response] of Object.entries(op(r.path, r.method.toLowerCase()).responses as Json))
        expect(response.headers['x-amzn-RequestId'], `${r.operationId} ${status}`).toEqual({
          $ref: '#/components/headers/RequestId',
        });
  });

  it('declares the parameters from the request schemas, with the patterns, bounds and examples the envelope holds', () => {
    const params = Object.fromEntries(op('/pets', 'get').parameters.map((p: Json) => [p.name, p]));
    expect(params.limit).toMatchObject({
      in: 'query',
      required: false,
      example: 20,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 20, pattern: '^(0|[1-9][0-9]*)$' },
    });
    expect(params.status.schema).toEqual({ $ref: '#/components/schemas/PetStatus' });
    expect(params.cursor).toMatchObject({ in: 'query', required: false });
    expect(op('/pets/{petId}', 'get').parameters[0]).toMatchObject({
      name: 'petId',
      in: 'path',
      required: true,
      example: 1001,
      schema: { type: 'integer', format: 'int64', pattern: '^(0|-?[1-9][0-9]{0,18})$' },
    });
    expect(op('/pets', 'post').parameters).toEqual([
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        example: expect.any(String),
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
      }),
    ]);
    // Every parameter has an example a tool can send, or is optional.
    for (const r of ROUTES)
      for (const p of op(r.path, r.method.toLowerCase()).parameters ?? [])
        if (p.required) expect(p.example, `${r.operationId} ${p.name}`).toBeDefined();
  });

  it('says what the envelope enforces: the name rules and the media types a body is read in', () => {
    const name = doc.components.schemas.NewPet.properties.name;
    const pattern = new RegExp(name.pattern, 'u');
    expect(['Rex', 'a b', 'Ünïcödé 🐕'].every((n) => pattern.test(n))).toBe(true);
    expect([' ', '\u200b', 'a\nb', '\u0085x'].some((n) => pattern.test(n))).toBe(false);
    expect(op('/pets', 'post').requestBody.description).toMatch(/application\/…\+json.*UTF-8.*415/);
    expect(doc.servers.map((s: Json) => s.description)).not.toContainEqual(expect.stringMatching(/[{}]/));
    // The gateway's answers to a path or method no operation has: OpenAPI has no place for them but the overview.
    expect(doc.info.description).toMatch(/404 `not_found`.*405 `method_not_allowed` with `Allow`.*`x-amzn-RequestId`/);
  });

  it('marks getPet deprecated with its sunset, and /store/orders not implemented', () => {
    const get = op('/pets/{petId}', 'get');
    expect(get.deprecated).toBe(true);
    expect(get['x-sunset']).toBe('2030-12-05T00:00:00Z');
    expect(get.description).toContain('2030-12-05');
    for (const h of ['Deprecation', 'Sunset', 'Link']) expect(get.responses['200'].headers[h].required).toBe(true);
    expect(get.responses['410'].content['application/json'].example.code).toBe('endpoint_removed');
    const orders = op('/store/orders', 'get');
    expect(orders['x-not-implemented']).toBe(true);
    expect(orders.description).toMatch(/Not implemented/);
  });

  it('takes everything about an operation from its route entry: a new one needs no edit of the generator', () => {
    // What PATCH /pets/{petId} would be: a new body schema, the petId parameter, body errors and a deprecation.
    // Declared here, as an entry file declares a body schema only it uses: nothing in contract/schemas.ts names it.
    const Tag = meta(z.string(), { id: 'TestTag', description: 'A tag.' });
    const PetChange = meta(z.object({ status: PetStatus, tags: z.optional(z.array(Tag)) }), {
      id: 'TestPetChange',
      description: 'A change of status.',
    });
    const patch = {
      operationId: 'testChangePet',
      method: 'PATCH',
      does: 'changes',
      path: '/test-only/pets/{petId}',
      summary: "Change an animal's status",
      description: "Changes an animal's status.",
      request: { params: PetIdParam, body: PetChange },
      success: { status: 200, description: 'The changed animal.', schema: Pet },
      errors: [badRequest(['validation_failed'], 'Bad body.'), ...BODY_ERRORS],
      access: { tables: [LIMITER_GRANT] },
      deprecation: {
        deprecatedAt: '2026-01-01T00:00:00Z',
        sunsetAt: '2031-01-01T00:00:00Z',
        successor: '/x',
        instead: 'nothing',
      },
    } as const satisfies Route;
    const built = buildOpenApi([...ROUTES, patch]) as Json;
    // Collected, each after the named schemas it uses.
    const names = Object.keys(built.components.schemas);
    expect(names).toEqual(expect.arrayContaining(['TestTag', 'TestPetChange', 'Pet', 'PetStatus']));
    expect(names.indexOf('TestTag')).toBeLessThan(names.indexOf('TestPetChange'));
    expect(names.indexOf('PetStatus')).toBeLessThan(names.indexOf('Pet'));
    expect(built.components.schemas.TestPetChange.properties.tags.items).toEqual({
      $ref: '#/components/schemas/TestTag',
    });
    const operation = built.paths['/test-only/pets/{petId}'].patch;
    expect(operation.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TestPetChange',
    });
    expect(operation.parameters[0]).toMatchObject({ name: 'petId', in: 'path', schema: { format: 'int64' } });
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '413', '415']));
    expect(operation.description).toMatch(/^Changes an animal's status\. \*\*Deprecated\*\* .* Use nothing instead\.$/);
    // Headers the function sends on its own errors are required, the gateway's are not.
    expect(operation.responses['415'].headers.Sunset.required).toBe(true);
    expect(operation.responses['401'].headers.Sunset.required).toBe(false);
  });

  describe('one response per status: an entry never loses a status to the common ones without a word', () => {
    const getPet = ROUTES.find((r) => r.operationId === 'getPet')!;
    const withError = (status: number, codes: Route['errors'][number]['codes'] = ['not_found']): Route => ({
      ...getPet,
      operationId: 'testOwnStatus',
      errors: [...getPet.errors, { status, description: 'Its own.', codes }],
    });

    it.each([401, 429, 500, 503])(
      "refuses an operation's own %i, which every operation gives, naming both",
      (status) => {
        expect(() => buildOpenApi([withError(status)])).toThrow(
          new RegExp(`^testOwnStatus declares a ${status} response, which every operation gives already`),
        );
      },
    );

    it('refuses two responses of one status anywhere else (the envelope 431 beside an own one), naming both', () => {
      expect(() => buildOpenApi([withError(431)])).toThrow(/^testOwnStatus: two responses of status 431/);
    });

    it("merges an operation's own 403 with the envelope's: its description first, every code kept", () => {
      const owner = { ...withError(403, ['forbidden']), does: 'deletes', method: 'DELETE' } as const;
      const response = (buildOpenApi([owner]) as Json).paths[owner.path].delete.responses['403'];
      expect(response.description).toMatch(/^Its own\. The API key may not call this operation: .*`key_read_only`/);
      expect(response.description).toMatch(/Codes: `forbidden`, `key_read_only`\.$/);
    });
  });

  it('refuses a route entry whose body schema has no id, naming the operation', () => {
    const anonymous = { ...ROUTES[1]!, request: { body: z.object({ a: z.string() }) } };
    expect(() => buildOpenApi([anonymous])).toThrow(/createPet request body: the schema lacks \.meta\(\{ id \}\)/);
  });
});
