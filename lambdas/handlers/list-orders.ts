import { LIST_ORDERS } from '../../contract/operations/list-orders.ts';
import { apiHandler } from '../shared/http.ts';
import type { Runtime } from '../shared/runtime.ts';
import { AppError } from '../domain/errors.ts';

/** GET /store/orders exists in the spec, but its contract is "not shown": 501 until it is specified. */
export function listOrdersHandler(rt: Runtime) {
  // One answer for every call, made once per container: an AppError carries no stack or request data to vary.
  const notImplemented = new AppError(
    'not_implemented',
    'GET /store/orders exists but its contract is not specified yet.',
  );
  return apiHandler(rt, LIST_ORDERS, async () => {
    throw notImplemented;
  });
}
