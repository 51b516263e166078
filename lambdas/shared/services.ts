/**
 * The composition root: domain services wired to their one storage adapter, once per container.
 */
import { createIdempotentPetCreator } from '../domain/idempotency.ts';
import { createPetService } from '../domain/pets.ts';
import { dynamoIdempotencyStore } from '../storage/idempotency-store.ts';
import { createIdAllocator, dynamoPetStore } from '../storage/pet-store.ts';
import { dynamoLimitStore } from '../storage/limit-store.ts';
import { withUsageHistory } from '../storage/usage-history.ts';
import { now } from './clock.ts';

/** One id allocator per container, shared by every create (one reserved block, not two). */
const petIds = createIdAllocator();
export const petService = createPetService(dynamoPetStore, petIds);
/** Creates pets, under an Idempotency-Key when the request carries one. */
export const petCreator = createIdempotentPetCreator({
  store: dynamoIdempotencyStore,
  pets: dynamoPetStore,
  ids: petIds,
  clock: () => now(),
});
/** The limiter, recording a key's minute-by-minute history for the admin tool's usage chart. */
export const limitStore = withUsageHistory(dynamoLimitStore);
