import { apiHandler } from '../shared/http.ts';
import { limitStore, petService } from '../shared/services.ts';

export const handler = apiHandler('getPet', { limitStore }, async (event) => ({
  statusCode: 200,
  body: await petService.get(event.validated.params.petId),
}));
