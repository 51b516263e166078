import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { apiHandler } from '../shared/http.ts';
import type { Runtime } from '../shared/runtime.ts';
import { cursorCodec } from '../domain/pagination.ts';
import { listPets } from '../domain/pets.ts';
import { createPetStore } from '../storage/pet-store.ts';

/** The only function given the cursor secret: a missing secret fails its cold start and no other function's. */
export function listPetsHandler(rt: Runtime) {
  const keys = rt.cursorKeys;
  if (!keys)
    throw new Error(
      `Invalid configuration: listPets needs the cursor secret, CURSOR_SECRET_ARN outside STAGE=local (STAGE is ${rt.config.STAGE})`,
    );
  const pets = createPetStore(rt.storage);
  return apiHandler(rt, LIST_PETS, async (event) => {
    // Cached by the runtime: a Secrets Manager read only every few minutes (shared/cursor-keys.ts).
    const cursors = cursorCodec({ keys: await keys(), now: rt.now });
    const { limit, status, cursor } = event.validated.query;
    const after = cursor ? cursors.read(cursor, { status }) : undefined;
    const page = await listPets(pets, { limit, status, after });
    const headers: Record<string, string> = page.next
      ? { Link: cursors.nextPageLink({ limit, status }, page.next) }
      : {};
    return { statusCode: 200, body: page.pets, headers };
  });
}
