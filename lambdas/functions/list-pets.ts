// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { listPetsHandler } from '../handlers/list-pets.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';

export const handler = listPetsHandler(runtimeFromEnvironment());
