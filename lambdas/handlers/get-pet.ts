import { GET_PET } from '../../contract/operations/get-pet.ts';
import { apiHandler } from '../shared/http.ts';
import type { Runtime } from '../shared/runtime.ts';
import { getPet } from '../domain/pets.ts';
import { createPetStore } from '../storage/pet-store.ts';

export function getPetHandler(rt: Runtime) {
  const pets = createPetStore(rt.storage);
  return apiHandler(rt, GET_PET, async (event) => ({
    statusCode: 200,
    body: await getPet(pets, event.validated.params.petId),
  }));
}
