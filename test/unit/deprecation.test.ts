import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { assertNotRemoved, deprecationHeaders } from '../../lambdas/domain/deprecation.ts';
import { AppError } from '../../lambdas/domain/errors.ts';

const getPet = ROUTES.find((r) => r.operationId === 'getPet')!;
const deprecation = getPet.deprecation!;
const sunsetMs = Date.parse('2030-12-05T00:00:00Z');

describe('deprecation of getPet (spec section 9: removed on 5 December 2030)', () => {
  it('announces the sunset as an HTTP date (RFC 8594) and the deprecation as @<unix seconds> (RFC 9745)', () => {
    const h = deprecationHeaders(deprecation);
    expect(h.Sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(h.Deprecation).toMatch(/^@\d+$/);
    // A Sunset earlier than the Deprecation would contradict RFC 8594.
    expect(Number(h.Deprecation!.slice(1)) * 1000).toBeLessThan(sunsetMs);
    expect(h.Link).toBe('</v1/pets?status=available>; rel="successor-version"');
  });

  it('is still served the millisecond before the sunset', () => {
    expect(() => assertNotRemoved(deprecation, sunsetMs - 1, 'GET /v1/pets/{petId}')).not.toThrow();
  });

  it('answers 410 endpoint_removed from the sunset on, naming the successor', () => {
    for (const at of [sunsetMs, sunsetMs + 1, Date.parse('2031-06-01T00:00:00Z')]) {
      let caught: unknown;
      try {
        assertNotRemoved(deprecation, at, 'GET /v1/pets/{petId}');
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(AppError);
      expect((caught as AppError).toBody()).toMatchObject({ code: 'endpoint_removed', status: 410 });
      expect((caught as AppError).message).toContain('/v1/pets?status=available');
    }
  });
});
