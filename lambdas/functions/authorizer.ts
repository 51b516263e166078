// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { authorizerHandler } from '../handlers/authorizer.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';

export const handler = authorizerHandler(runtimeFromEnvironment());
