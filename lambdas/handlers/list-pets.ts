import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { apiHandler } from '../shared/http.ts';
import type { Runtime } from '../shared/runtime.ts';
import { cursorSecret } from '../shared/config.ts';
import { cursorCodec } from '../domain/pagination.ts';
import { createPetQueries } from '../domain/pets.ts';
import { createPetStore } from '../storage/pet-store.ts';

/** The only function given CURSOR_SECRET: a missing secret fails its cold start and no other function's. */
export function listPetsHandler(rt: Runtime) {
  const pets = createPetQueries(createPetStore(rt.storage));
  const cursors = cursorCodec({ secret: cursorSecret(rt.config), now: rt.now });
  return apiHandler(rt, LIST_PETS, async (event) => {
    const { limit, status, cursor } = event.validated.query;
    const after = cursor ? cursors.read(cursor, { status }) : undefined;
    const page = await pets.list({ limit, status, after });
    const headers: Record<string, string> = page.next
      ? { Link: cursors.nextPageLink({ limit, status }, page.next) }
      : {};
    return { statusCode: 200, body: page.pets, headers };
  });
}
