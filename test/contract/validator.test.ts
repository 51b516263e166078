/** The response validator itself: it must reject what the document does not allow, or the contract proves nothing. */
import { describe, expect, it } from 'vitest';
import { ContractViolation, assertConforms, operationFor, type Exchange } from '../helpers/contract.ts';

const rl = {
  'X-RateLimit-Limit': '60',
  'X-RateLimit-Remaining': '59',
  'X-RateLimit-Reset': '1767225660',
  'Content-Type': 'application/json',
};
const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
const dep = {
  Deprecation: '@1767225600',
  Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  Link: '</v1/pets?status=available>; rel="successor-version"',
};
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
    assertConforms(ex({ method: 'POST', status: 201, json: pet, headers: { ...rl, Location: '/v1/pets/1' } }));
    assertConforms(ex({ path: '/pets/1', json: pet, headers: { ...rl, ...dep } }));
    assertConforms(ex({ path: '/store/orders', status: 501, json: err('not_implemented', 501) }));
    assertConforms(ex({ path: '/nope', status: 404, json: err('not_found', 404) }));
  });

  it.each([
    ['an undeclared status', ex({ status: 404, json: err('not_found', 404) }), /not declared/],
    ['a missing rate-limit header', ex({ headers: { 'Content-Type': 'application/json' } }), /X-RateLimit-Limit/],
    ['a non-integer rate-limit header', ex({ headers: { ...rl, 'X-RateLimit-Reset': 'soon' } }), /not an integer/],
    ['a wrong content type', ex({ headers: { ...rl, 'Content-Type': 'text/plain' } }), /content type/],
    ['a body off the schema', ex({ json: [{ ...pet, status: 'lost' }] }), /schema/],
    ['a pet missing a field', ex({ json: [{ id: 1, name: 'x', status: 'sold' }] }), /schema/],
    ['an unsafe id', ex({ json: [{ ...pet, id: 2 ** 53 }] }), /schema/],
    ['a body that is not JSON', ex({ body: 'oops' }), /not valid JSON/],
    ['a 201 without Location', ex({ method: 'POST', status: 201, json: pet }), /Location/],
    ['a 429 without Retry-After', ex({ status: 429, json: err('rate_limited', 429) }), /Retry-After/],
    [
      'getPet without Sunset',
      ex({ path: '/pets/1', json: pet, headers: { ...rl, Deprecation: dep.Deprecation, Link: dep.Link } }),
      /Sunset/,
    ],
    ['an unknown error code', ex({ status: 400, json: err('oops', 400) }), /schema/],
    ['a code whose status differs', ex({ status: 400, json: err('not_found', 400) }), /does not match/],
    ['a body status that differs', ex({ status: 400, json: err('validation_failed', 422) }), /schema|does not match/],
    ['an unknown path answered 200', ex({ path: '/nope' }), /gateway's 404/],
    ['a 405 without Allow', ex({ method: 'DELETE', status: 405, json: err('method_not_allowed', 405) }), /Allow/],
  ])('rejects %s', (_, exchange, message) => {
    expect(() => assertConforms(exchange)).toThrow(ContractViolation);
    expect(() => assertConforms(exchange)).toThrow(message);
  });
});
