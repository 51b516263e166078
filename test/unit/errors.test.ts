/** The one error mapper: anything thrown becomes the spec's Error object, and raw errors never leak. */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../contract/errors.ts';
import { AppError, UnavailableError } from '../../lambdas/domain/errors.ts';
import { errorResponse, toAppError } from '../../lambdas/shared/http.ts';

describe('error mapping', () => {
  it('gives every code a status that is an HTTP error status', () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(new AppError(code as keyof typeof ERROR_CODES).toBody()).toEqual({
        code,
        message: expect.any(String),
        status,
      });
    }
  });

  it('maps the body parser failures to 415 and 400, and anything unknown to a bare 500', () => {
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 415 })).code).toBe('unsupported_media_type');
    expect(toAppError(Object.assign(new Error('x'), { statusCode: 422 })).code).toBe('invalid_json');
    const internal = toAppError(new TypeError('secret detail at /var/task/index.mjs:1:1'));
    expect(internal.toBody()).toEqual({
      code: 'internal_error',
      message: ERROR_CODES.internal_error.message,
      status: 500,
    });
  });

  it('renders the Error object as JSON with the status, its headers and the caller headers', () => {
    const res = errorResponse(new UnavailableError('ThrottlingException', 2), { 'X-RateLimit-Limit': '60' });
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Retry-After': '2',
      'X-RateLimit-Limit': '60',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(JSON.parse(res.body)).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(res.body).not.toContain('Throttling');
  });
});
