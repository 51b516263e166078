import { apiHandler } from '../shared/http.ts';
import { limitStore, petService } from '../shared/services.ts';
import { NewPet } from '../domain/schemas.ts';
import { BASE_PATH } from '../../lib/api/routes.ts';

export const handler = apiHandler('createPet', { body: NewPet }, { limitStore }, async (event) => {
  const pet = await petService.create(event.validated.body);
  return { statusCode: 201, body: pet, headers: { Location: `${BASE_PATH}/pets/${pet.id}` } };
});
