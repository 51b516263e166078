import { apiHandler } from '../shared/http.ts';
import { limitStore, petService } from '../shared/services.ts';
import { PetIdParam } from '../../contract/schemas.ts';

export const handler = apiHandler('getPet', { params: PetIdParam }, { limitStore }, async (event) => ({
  statusCode: 200,
  body: await petService.get(event.validated.params.petId),
}));
