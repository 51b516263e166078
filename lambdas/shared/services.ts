/**
 * The composition root: domain services wired to their one storage adapter, once per container.
 */
import { createPetService } from '../domain/pets.ts';
import { createIdAllocator, dynamoPetStore } from '../storage/pet-store.ts';
import { dynamoLimitStore } from '../storage/limit-store.ts';
import { dynamoKeyStore } from '../storage/key-store.ts';

export const petService = createPetService(dynamoPetStore, createIdAllocator());
export const limitStore = dynamoLimitStore;
export const keyStore = dynamoKeyStore;
