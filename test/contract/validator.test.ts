/** The response validator itself: it must reject what the document does not allow, or the contract proves nothing. */
import { describe, expect, it } from 'vitest';
import { ROUTES, type OperationId, type Route } from '../../contract/routes.ts';
import {
  ContractViolation,
  assertConforms,
  documentedHeaders,
  operationFor,
  type Exchange,
} from '../helpers/contract.ts';

/** What the document requires on a response, with example values: no test restates an operation's headers. */
const headersOf = (r: Route, status: number = r.success!.status) => documentedHeaders(r.path, r.method, status);
/** A concrete path for a route, its parameters filled with 1. */
const pathOf = (r: Route) => r.path.replace(/\{\w+\}/g, '1');
const byId = (id: OperationId) => ROUTES.find((r) => r.operationId === id)!;
const LIST = byId('listPets');
const rl = headersOf(LIST);
const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
/** A deprecated operation with a success body, and one whose success carries Location. */
const DEPRECATED = ROUTES.find((r) => r.deprecation && r.success)!;
const CREATES = ROUTES.find((r) => r.success?.headers?.includes('Location'))!;
const without = (h: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => k !== name));
const ex = (
  o: Partial<Omit<Exchange, 'headers'>> & { headers?: Record<string, string>; json?: unknown },
): Exchange => ({
  method: o.method ?? 'GET',
  path: o.path ?? '/pets',
  status: o.status ?? 200,
  headers: new Headers(o.headers ?? rl),
  body: o.body ?? JSON.stringify(o.json ?? [pet]),
});
const err = (code: string, status: number) => ({ code, message: 'm', status });
const errorHeaders = headersOf(LIST, 400);

describe('contract validator', () => {
  it('maps requests to operations', () => {
    expect(operationFor('GET', '/pets?limit=2')).toMatchObject({ operationId: 'listPets' });
    expect(operationFor('POST', '/pets')).toMatchObject({ operationId: 'createPet' });
    expect(operationFor('GET', '/pets/12')).toMatchObject({ operationId: 'getPet', template: '/pets/{petId}' });
    expect(operationFor('GET', '/store/orders')).toMatchObject({ operationId: 'listOrders' });
    expect(operationFor('DELETE', '/pets')).toBe('method-not-allowed');
    expect(operationFor('GET', '/nope')).toBe('unknown-path');
    expect(operationFor('GET', '/pets/%E0%A4%A')).toBe('unknown-path');
  });

  it('accepts conforming responses', () => {
    assertConforms(ex({}));
    assertConforms(
      ex({ method: CREATES.method, path: pathOf(CREATES), status: 201, json: pet, headers: headersOf(CREATES) }),
    );
    assertConforms(ex({ path: pathOf(DEPRECATED), json: pet, headers: headersOf(DEPRECATED) }));
    assertConforms(
      ex({ path: '/store/orders', status: 501, json: err('not_implemented', 501), headers: errorHeaders }),
    );
    assertConforms(ex({ path: '/nope', status: 404, json: err('not_found', 404), headers: errorHeaders }));
  });

  it.each([
    ['an undeclared status', ex({ status: 404, json: err('not_found', 404), headers: errorHeaders }), /not declared/],
    ['a missing rate-limit header', ex({ headers: { 'Content-Type': 'application/json' } }), /X-RateLimit-Limit/],
    ['a non-integer rate-limit header', ex({ headers: { ...rl, 'X-RateLimit-Reset': 'soon' } }), /not an integer/],
    ['a wrong content type', ex({ headers: { ...rl, 'Content-Type': 'text/plain' } }), /content type/],
    ['a body off the schema', ex({ json: [{ ...pet, status: 'lost' }] }), /schema/],
    ['a pet missing a field', ex({ json: [{ id: 1, name: 'x', status: 'sold' }] }), /schema/],
    ['an unsafe id', ex({ json: [{ ...pet, id: 2 ** 53 }] }), /schema/],
    ['a body that is not JSON', ex({ body: 'oops' }), /not valid JSON/],
    [
      'a 201 without Location',
      ex({ method: CREATES.method, status: 201, json: pet, headers: without(headersOf(CREATES), 'Location') }),
      /Location/,
    ],
    ['a 429 without Retry-After', ex({ status: 429, json: err('rate_limited', 429) }), /Retry-After/],
    ['a response without its request id', ex({ headers: without(rl, 'x-amzn-RequestId') }), /x-amzn-RequestId/],
    [
      'a deprecated operation without Sunset',
      ex({ path: pathOf(DEPRECATED), json: pet, headers: without(headersOf(DEPRECATED), 'Sunset') }),
      /Sunset/,
    ],
    ['an unknown error code', ex({ status: 400, json: err('oops', 400), headers: errorHeaders }), /schema/],
    [
      'a code whose status differs',
      ex({ status: 400, json: err('not_found', 400), headers: errorHeaders }),
      /does not match/,
    ],
    [
      'a body status that differs',
      ex({ status: 400, json: err('validation_failed', 422), headers: errorHeaders }),
      /schema|does not match/,
    ],
    ['an unknown path answered 200', ex({ path: '/nope' }), /gateway's 404/],
    [
      'a 405 without Allow',
      ex({ method: 'DELETE', status: 405, json: err('method_not_allowed', 405), headers: errorHeaders }),
      /Allow/,
    ],
  ])('rejects %s', (_, exchange, message) => {
    expect(() => assertConforms(exchange)).toThrow(ContractViolation);
    expect(() => assertConforms(exchange)).toThrow(message);
  });
});
