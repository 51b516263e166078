import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { apiHandler } from '../shared/http.ts';
import { pagerOf } from '../shared/paging.ts';
import type { Runtime } from '../shared/runtime.ts';
import { listPets } from '../domain/pets.ts';
import { createPetStore } from '../storage/pet-store.ts';

export function listPetsHandler(rt: Runtime) {
  const pages = pagerOf(rt, LIST_PETS);
  const pets = createPetStore(rt.storage);
  return apiHandler(rt, LIST_PETS, async (event) => {
    const pager = await pages(event.validated);
    const { limit, status } = event.validated.query;
    const page = await listPets(pets, { limit, status, after: pager.after });
    return { statusCode: 200, body: page.pets, headers: pager.headers(page.next) };
  });
}
