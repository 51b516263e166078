import { LIST_ORDERS } from '../../contract/operations/list-orders.ts';
import { apiHandler } from '../shared/http.ts';
import type { Runtime } from '../shared/runtime.ts';
import { AppError } from '../domain/errors.ts';

/** GET /store/orders exists in the spec, but its contract is "not shown": 501 until it is specified. */
export function listOrdersHandler(rt: Runtime) {
  // One answer for every call, made once per container (an AppError carries no stack or request data to vary), and
  // returned: the envelope answers a returned AppError as a thrown one, without the throw's path through middy.
  const notImplemented = new AppError(
    'not_implemented',
    'GET /store/orders exists but its contract is not specified yet.',
  );
  return apiHandler(rt, LIST_ORDERS, async () => notImplemented);
}
