/**
 * Instrumentation and fault injection on the functions' real DynamoDB clients (nothing is mocked): a middleware on
 * each client's stack sees every command and may fail it the way DynamoDB or the network would. No vitest import,
 * so scripts run outside the test runner (test/infra/emf-scenarios.ts) can use it too.
 */
import type { LocalApi } from '../../lib/local/app.ts';

/** A middleware of the SDK's stack, as tests write it: sees a command's input (and name), calls or replaces next. */
export type ClientMiddleware = (
  next: (args: { input: object }) => Promise<unknown>,
  context: { commandName?: string },
) => (args: { input: object }) => Promise<unknown>;

/**
 * Adds a middleware to the DynamoDB client of every function of `api` (instrumentation and fault injection on the
 * real clients; nothing is mocked). Returns the function that removes it again.
 */
export function onEveryClient(
  api: LocalApi,
  name: string,
  middleware: ClientMiddleware,
  step: 'initialize' | 'finalizeRequest' = 'initialize',
): () => void {
  const clients = [...api.functions.values()].flatMap((f) => [f.runtime.storage.ddb, f.runtime.storage.once.ddb]);
  // The add overloads differ per step; the middleware's shape is the same for both steps used here.
  for (const c of clients) c.middlewareStack.add(middleware as never, { step, name } as never);
  return () => {
    for (const c of clients) c.middlewareStack.remove(name);
  };
}

/** What the SDK throws when DynamoDB throttles a request (HTTP 400, ThrottlingException). */
export function throttlingException(): Error {
  return Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
    name: 'ThrottlingException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });
}

/** Whether a DynamoDB request reads the keys table (the authorizer's BatchGetItem of a key and its standing). */
export function readsKeys(input: unknown): boolean {
  const i = input as { TableName?: string; RequestItems?: Record<string, unknown> };
  return [i.TableName ?? '', ...Object.keys(i.RequestItems ?? {})].some((t) => t.endsWith('ApiKeys'));
}
