// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { getPetHandler } from '../handlers/get-pet.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';

export const handler = getPetHandler(runtimeFromEnvironment());
