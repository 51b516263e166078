/**
 * Pagination, its `Link` and a create's `Location` are generic over the route: a list operation of another
 * resource, on another index, with other filters (here a test-only `GET /test-only/shelters/{shelterId}/things`,
 * declared in this file only) gets a next link of its own path and query, cursors bound to its operation and its
 * filters, and a create its `Location`, all from its route entry; listPets' links stay as they were.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { headerName } from '../../contract/header-names.ts';
import { ROUTES, createAndRead, matchPath, type Route } from '../../contract/routes.ts';
import { BASE_PATH, locationOf, pathOf } from '../../contract/route-types.ts';
import { fieldsOf } from '../../contract/request-fields.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import { CURSOR_PARAM, cursorCodec, listingOf, type PageKey } from '../../lambdas/domain/pagination.ts';
import { pagerOf } from '../../lambdas/shared/paging.ts';
import type { Runtime } from '../../lambdas/shared/runtime.ts';

const SECRET = 'unit-paging-secret-0123456789';
const T0 = Date.UTC(2026, 10, 28, 12);
const codec = cursorCodec({ keys: { current: SECRET }, now: () => T0 });

/** A neutral list route: a path parameter and a query filter of its own, `limit` and `cursor` as every list has. */
const LIST_THINGS = {
  operationId: 'testListThings',
  method: 'GET',
  does: 'reads',
  path: '/test-only/shelters/{shelterId}/things',
  summary: 'List things',
  request: {
    params: z.object({ shelterId: z.string() }),
    query: z.object({
      kind: z.optional(z.enum(['cat', 'dog', 'rabbit ears'])),
      limit: z.optional(z.string()),
      cursor: z.optional(z.string()),
    }),
  },
  success: { status: 200, description: 'A page.', schema: z.array(z.unknown()), headers: ['LinkNext'] },
  errors: [],
  access: { tables: [LIMITER_GRANT], cursorSecret: true },
} as const satisfies Route;

/** Its resource's create and read, for `Location`. */
const CREATE_SHELTER = {
  operationId: 'testCreateShelter',
  method: 'POST',
  does: 'creates',
  path: '/test-only/shelters',
  summary: 'Add a shelter',
  request: {},
  success: { status: 201, description: 'Made.', schema: z.object({ id: z.number() }), headers: ['Location'] },
  errors: [],
  access: { tables: [LIMITER_GRANT] },
} as const satisfies Route;
const GET_SHELTER = {
  operationId: 'testGetShelter',
  method: 'GET',
  does: 'reads',
  path: '/test-only/shelters/{shelterId}',
  summary: 'One shelter',
  request: { params: z.object({ shelterId: z.string() }) },
  errors: [],
  access: { tables: [LIMITER_GRANT] },
} as const satisfies Route;

/** A request as the envelope hands it on: validated with the entry's own schemas. */
const validated = (shelterId: string, query: Record<string, string>) => ({
  params: LIST_THINGS.request.params.parse({ shelterId }),
  query: LIST_THINGS.request.query.parse(query),
});
const things = (shelterId: string, query: Record<string, string>) =>
  listingOf(LIST_THINGS, validated(shelterId, query));

/** The target of a `Link: <…>; rel="next"` and its cursor. */
function target(link: string): { path: string; query: [string, string][]; cursor: string } {
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(m, link).not.toBeNull();
  const url = new URL(m![1]!, 'http://x');
  return { path: url.pathname, query: [...url.searchParams], cursor: url.searchParams.get(CURSOR_PARAM)! };
}

function refused(cursor: string, listing: ReturnType<typeof things>): string {
  try {
    codec.read(cursor, listing);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_cursor');
    return (err as AppError).message;
  }
  throw new Error('accepted');
}

describe('a list route of another resource', () => {
  it("links to its own path and query: the request's filters and limit, in the entry's order, then the cursor", () => {
    const listing = things('12', { limit: '5', kind: 'rabbit ears' });
    const link = target(codec.nextPageLink(listing, { id: 40 }));
    expect(link.path).toBe(`${BASE_PATH}/test-only/shelters/12/things`);
    expect(link.query.map(([k]) => k)).toEqual(['kind', 'limit', 'cursor']);
    expect(link.query.slice(0, 2)).toEqual([
      ['kind', 'rabbit ears'],
      ['limit', '5'],
    ]);
    // A parameter not given is not added; a path value is one encoded segment.
    const bare = target(codec.nextPageLink(things('a/b', {}), { id: 1 }));
    expect(bare.path).toBe(`${BASE_PATH}/test-only/shelters/a%2Fb/things`);
    expect(bare.query.map(([k]) => k)).toEqual(['cursor']);
  });

  it('binds its cursor to its operation, its path parameter and its query filter; the page size may change', () => {
    const first = things('12', { kind: 'cat', limit: '5' });
    const { cursor } = target(codec.nextPageLink(first, { id: 40 }));
    expect(codec.read(cursor, first)).toEqual({ id: 40 });
    expect(codec.read(cursor, things('12', { kind: 'cat', limit: '50' }))).toEqual({ id: 40 });
    expect(refused(cursor, things('13', { kind: 'cat' }))).toBe(
      'The cursor was made for another shelterId or kind filter: keep the filters of the first page.',
    );
    refused(cursor, things('12', { kind: 'dog' }));
    refused(cursor, things('12', {}));
    // The same filters, as far as the binding goes, on another operation: still another listing.
    refused(cursor, { ...first, operationId: 'testListOtherThings' });
  });

  it("refuses listPets' cursors, and listPets refuses its", () => {
    const pets = listingOf(LIST_PETS, { query: {} });
    const petsCursor = target(codec.nextPageLink(pets, { id: 3 })).cursor;
    expect(refused(petsCursor, things('12', {}))).toMatch(/another operation/);
    const thingsCursor = target(codec.nextPageLink(things('12', {}), { id: 3 })).cursor;
    expect(refused(thingsCursor, pets)).toMatch(/another operation/);
  });

  it("gets the page and the next link from its entry through the shared pager, as listPets' handler does", async () => {
    const rt = {
      config: { STAGE: 'local' },
      now: () => T0,
      cursorKeys: async () => ({ current: SECRET }),
    } as unknown as Runtime;
    const pages = pagerOf(rt, LIST_THINGS);
    const first = await pages(validated('7', { kind: 'dog', limit: '2' }));
    expect(first.after).toBeUndefined();
    const next: PageKey = { id: 99 };
    const link = first.headers(next).Link!;
    const { path, cursor } = target(link);
    expect(path).toBe(`${BASE_PATH}/test-only/shelters/7/things`);
    const second = await pages(validated('7', { kind: 'dog', limit: '2', cursor }));
    expect(second.after).toEqual(next);
    expect(second.headers(undefined)).toEqual({});
    await expect(pages(validated('8', { kind: 'dog', cursor }))).rejects.toThrow(/shelterId or kind/);
    // A function without the cursor secret fails when it starts, naming its operation.
    expect(() => pagerOf({ ...rt, cursorKeys: undefined }, LIST_THINGS)).toThrow(/testListThings needs the cursor/);
  });
});

describe("a create's Location", () => {
  it('is its own path and the new id: the path of the read the route table pairs with it', () => {
    expect(locationOf(CREATE_SHELTER, undefined, 31)).toBe(`${BASE_PATH}/test-only/shelters/31`);
    const routes = [CREATE_SHELTER, GET_SHELTER];
    expect(createAndRead(routes).map((p) => p.read.operationId)).toEqual(['testGetShelter']);
    expect(matchPath(locationOf(CREATE_SHELTER, {}, 31).slice(BASE_PATH.length), routes)).toEqual({
      template: GET_SHELTER.path,
      params: { shelterId: '31' },
    });
    // Below a parent, the parent's id is in it too.
    expect(locationOf({ path: '/test-only/shelters/{shelterId}/things' }, { shelterId: 4 }, 5)).toBe(
      `${BASE_PATH}/test-only/shelters/4/things/5`,
    );
    expect(() => pathOf({ path: '/test-only/shelters/{shelterId}/things' }, {})).toThrow(/no value for \{shelterId\}/);
  });

  it('of every create that sends one is read by a route of the table', () => {
    const creates = ROUTES.filter((r) => r.success?.headers?.some((h) => headerName(h) === 'Location'));
    expect(creates.length).toBeGreaterThan(0);
    for (const create of creates) {
      const at = matchPath(locationOf(create, {}, 1001).slice(BASE_PATH.length));
      expect(at, create.operationId).toBeDefined();
      expect(ROUTES.some((r) => r.does === 'reads' && r.path === at!.template)).toBe(true);
    }
  });
});

describe("the route table's list operations", () => {
  it('each declare what the shared pager needs: the cursor secret and a cursor parameter', () => {
    const lists = ROUTES.filter((r) => r.success?.headers?.some((h) => h === 'LinkNext'));
    expect(lists.map((r) => r.operationId)).toContain('listPets');
    for (const r of lists) {
      expect(r.access.cursorSecret, r.operationId).toBe(true);
      expect(Object.keys(fieldsOf(r.request.query)), r.operationId).toContain(CURSOR_PARAM);
    }
  });

  it("keep listPets' next link as it was: /v1/pets, limit, then status, then the cursor, whatever the request's order", () => {
    const link = codec.nextPageLink(
      listingOf(LIST_PETS, { query: LIST_PETS.request.query.parse({ status: 'sold', limit: '3' }) }),
      { id: 5 },
    );
    expect(link).toMatch(/^<\/v1\/pets\?limit=3&status=sold&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>; rel="next"$/);
    expect(codec.nextPageLink(listingOf(LIST_PETS, { query: {} }), { id: 5 })).toMatch(
      /^<\/v1\/pets\?cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>; rel="next"$/,
    );
  });
});
