// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { createPetHandler } from '../handlers/create-pet.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';

export const handler = createPetHandler(runtimeFromEnvironment());
