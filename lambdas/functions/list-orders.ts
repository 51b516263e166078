// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { listOrdersHandler } from '../handlers/list-orders.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';

export const handler = listOrdersHandler(runtimeFromEnvironment());
