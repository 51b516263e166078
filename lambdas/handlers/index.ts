/**
 * Every function's handler factory, by operation: the local server builds its functions from these with a
 * runtime of its own. The deployed Lambdas do not import this module (each one's entry, generated at synth by
 * lib/config/lambda-entries.ts, imports its one handler), so no bundle carries another function's code. `satisfies`
 * makes a missing or misspelt operation a compile error; a factory is named `<operationId>Handler`, in
 * `<operationId in kebab case>.ts`, as the generated entries import it.
 */
import type { OperationId } from '../../contract/routes.ts';
import type { HandlerFactory } from '../shared/runtime.ts';
import { authorizerHandler } from './authorizer.ts';
import { createPetHandler } from './create-pet.ts';
import { getPetHandler } from './get-pet.ts';
import { listOrdersHandler } from './list-orders.ts';
import { listPetsHandler } from './list-pets.ts';

/** A handler as Lambda calls it. */
export type LambdaHandler = (event: never, context: never) => Promise<unknown>;

export const OPERATION_HANDLERS = {
  listPets: listPetsHandler,
  createPet: createPetHandler,
  getPet: getPetHandler,
  listOrders: listOrdersHandler,
} as const satisfies Record<OperationId, HandlerFactory<LambdaHandler>>;

export const AUTHORIZER_HANDLER: HandlerFactory<LambdaHandler> = authorizerHandler;
