import { apiHandler } from '../shared/http.ts';
import { limitStore, petCreator } from '../shared/services.ts';
import { idempotencyKeyOf } from '../domain/idempotency.ts';
import { BASE_PATH } from '../../contract/routes.ts';

export const handler = apiHandler('createPet', { limitStore }, async (event) => {
  const key = idempotencyKeyOf(event.headers, event.multiValueHeaders);
  const { pet, statusCode, replayed } = await petCreator.create(event.validated.body, { keyId: event.auth.keyId, key });
  return {
    statusCode,
    body: pet,
    headers: { Location: `${BASE_PATH}/pets/${pet.id}`, ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}) },
  };
});
