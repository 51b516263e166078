/**
 * The per-request deadline. Lambda ends an invocation at its timeout with no answer at all (no Error object, no
 * headers, no metric, no cleanup), so the envelope derives a deadline from the context's remaining time and the
 * storage layer stops its DynamoDB calls (SDK retries included) before it, leaving time to answer a clean 503.
 *
 * It travels in an AsyncLocalStorage scope rather than through every port signature: it is a property of the
 * invocation, like the request id, and only the storage adapter's one send path reads it. It runs on a monotonic
 * clock, apart from the service clock that tests move across windows.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
// The global `performance` (the same object as node:perf_hooks'), not an import of node:perf_hooks: that module is
// loaded by nothing else in a bundle, and importing it cost 0.3-0.5 ms of every cold start.

const scope = new AsyncLocalStorage<{ readonly endMs: number }>();

/** Runs `fn` with a deadline `budgetMs` from now. */
export function withDeadline<T>(budgetMs: number, fn: () => Promise<T>): Promise<T> {
  return scope.run({ endMs: performance.now() + budgetMs }, fn);
}

/** Milliseconds left before the current request's deadline; undefined outside a request (admin tool, tests). */
export function timeLeft(): number | undefined {
  const s = scope.getStore();
  return s ? s.endMs - performance.now() : undefined;
}
