import { CREATE_PET } from '../../contract/operations/create-pet.ts';
import { apiHandler } from '../shared/http.ts';
import { jsonBody } from '../shared/json-body.ts';
import type { Runtime } from '../shared/runtime.ts';
import { createPetCreator } from '../domain/idempotency.ts';
import { createIdempotencyStore } from '../storage/idempotency-store.ts';
import { createIdAllocator, createPetWriter } from '../storage/pet-store.ts';
import { locationOf } from '../../contract/route-types.ts';

export function createPetHandler(rt: Runtime) {
  // One id allocator per container, shared by every create (one reserved block, not two). Its first block is
  // reserved while the container starts, beside the first request's count instead of after it: one DynamoDB round
  // trip off a cold create.
  const ids = createIdAllocator(rt.storage);
  ids.reserveAhead?.();
  const creator = createPetCreator({
    store: createIdempotencyStore(rt.storage),
    pets: createPetWriter(rt.storage),
    ids,
    clock: rt.now,
  });
  return apiHandler(
    rt,
    CREATE_PET,
    async (event) => {
      const { pet, statusCode, replayed } = await creator.create(event.validated.body, {
        keyId: event.auth.keyId,
        key: event.validated.headers['Idempotency-Key'],
      });
      return {
        statusCode,
        body: pet,
        headers: {
          Location: locationOf(CREATE_PET, event.validated.params, pet.id),
          ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
        },
      };
    },
    jsonBody,
  );
}
