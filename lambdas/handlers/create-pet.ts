import { apiHandler } from '../shared/http.ts';
import { idempotentPetCreator, limitStore, petService } from '../shared/services.ts';
import { idempotencyKeyOf } from '../domain/idempotency.ts';
import { NewPet } from '../domain/schemas.ts';
import { BASE_PATH } from '../../lib/api/routes.ts';

export const handler = apiHandler('createPet', { body: NewPet }, { limitStore }, async (event) => {
  // Without an Idempotency-Key the create is unchanged and costs no extra DynamoDB request.
  const key = idempotencyKeyOf(event.headers, event.multiValueHeaders);
  const result = key === undefined
    ? { pet: await petService.create(event.validated.body), statusCode: 201, replayed: false }
    : await idempotentPetCreator.create(event.validated.body, { keyId: event.auth.keyId, key });
  const { pet } = result;
  return {
    statusCode: result.statusCode,
    body: pet,
    headers: { Location: `${BASE_PATH}/pets/${pet.id}`, ...(result.replayed ? { 'Idempotent-Replayed': 'true' } : {}) },
  };
});
