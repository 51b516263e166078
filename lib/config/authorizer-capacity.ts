import { ROUTES } from '../../contract/routes.ts';

/**
 * The authorizer's duration per uncached invocation that its concurrency is sized for: one BatchGetItem in the
 * Region (single-digit ms at p99) plus SHA-256 and Lambda's per-invoke overhead, with room (the bench prints the
 * local warm duration beside it). Concurrency = requests/s × seconds each (Little's law); the stage throttle
 * applies to each method apart, so a flood spread over every authorized method reaches the authorizer at
 * rateLimit × methods a second (docs/deployment.md, "The authorizer's capacity").
 */
export const AUTHORIZER_DURATION_MS = 25;
/** The reserved concurrency that answers every uncached request the stage throttle admits on every method. */
export const authorizerConcurrencyFor = (throttle: { readonly rateLimit: number }): number =>
  Math.ceil((throttle.rateLimit * ROUTES.length * AUTHORIZER_DURATION_MS) / 1000);
/** Uncached requests per second the authorizer answers at `concurrency` (what it holds before Lambda throttles). */
export const authorizerCapacity = (concurrency: number, durationMs = AUTHORIZER_DURATION_MS): number =>
  Math.floor((concurrency * 1000) / durationMs);
