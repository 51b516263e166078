/**
 * A dependency that is slow or unsure answers 503 + Retry-After, not 500: the failures the service raises itself
 * (an id that cannot be allocated, the function's early timeout) map to service_unavailable in the one error mapper.
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { createPetCreator, type PetWriter } from '../../lambdas/domain/pets.ts';
import { errorResponse, toAppError } from '../../lambdas/shared/http.ts';

describe('503, not 500, when the service cannot be sure', () => {
  it('a create that finds every id it is given taken is 503 with Retry-After', async () => {
    let next = 1;
    const taken: PetWriter = { insert: async () => false };
    const service = createPetCreator(taken, { next: async () => next++ });
    const err = await service
      .create({ name: 'Rex', categoryId: 1 }, { createdBy: 'key_test' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    const res = errorResponse(toAppError(err));
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Retry-After']).toBe('1');
  });

  it("middy's early timeout just before the function's own is 503", () => {
    const timeout = Object.assign(new Error('[AbortError]: The operation was aborted.'), { name: 'TimeoutError' });
    expect(toAppError(timeout)).toBeInstanceOf(UnavailableError);
  });
});
