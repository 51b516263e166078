/**
 * What the smoke checks share: a recording fetch (every response is kept, so one check can look at the headers of
 * all of them) and small readers for the Error object and the rate-limit headers.
 */
import * as z from 'zod/mini';
import { ErrorObject } from '../../contract/schemas.ts';

/** Raised by a check to fail with a one-line reason. */
export class CheckFailed extends Error {}

export const fail = (reason: string): never => {
  throw new CheckFailed(reason);
};

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
}

/** A fetch that gives up after `timeoutMs` and remembers every response it returned. */
export function recordingFetch(
  timeoutMs: number,
  base: typeof fetch = globalThis.fetch,
): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const res = await base(req, { signal: AbortSignal.timeout(timeoutMs) });
    seen.push({ method: req.method, url: req.url, status: res.status, headers: res.headers });
    return res;
  };
  return { fetch: wrapped, seen };
}

/** A network error in one line: `fetch failed` alone says nothing, its cause does (ECONNREFUSED, ENOTFOUND…). */
export function describeError(err: unknown): string {
  if (err instanceof CheckFailed) return err.message;
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return 'no answer in time (timeout)';
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message}: ${cause}` : `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`;
}

/** Reads a response as the spec's Error object with the expected status and code. */
export async function expectError(res: Response, status: number, code: string): Promise<void> {
  const text = await res.text();
  if (res.status !== status)
    fail(`expected ${status} ${code}, got ${res.status}${text ? `: ${text.slice(0, 120)}` : ''}`);
  if (!/^application\/json\b/i.test(res.headers.get('content-type') ?? ''))
    fail(`Content-Type is ${res.headers.get('content-type') ?? 'missing'}, not application/json`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail(`the body is not JSON: ${text.slice(0, 120)}`);
  }
  const parsed = z.safeParse(ErrorObject, body);
  if (!parsed.success) fail(`the body is not an Error object {code, message, status}: ${text.slice(0, 120)}`);
  const e = parsed.data!;
  if (e.code !== code) fail(`code is "${e.code}", expected "${code}"`);
  if (e.status !== status) fail(`the body's status ${e.status} differs from the HTTP status ${status}`);
}

/** The X-RateLimit-* triple as numbers; fails when one is missing or not a whole number. */
export function rateLimitHeaders(headers: Headers): { limit: number; remaining: number; reset: number } {
  const read = (name: string) => {
    const v = headers.get(name);
    if (v === null) fail(`${name} is missing`);
    if (!/^\d+$/.test(v!)) fail(`${name} is "${v}", not a whole number`);
    return Number(v);
  };
  return {
    limit: read('X-RateLimit-Limit'),
    remaining: read('X-RateLimit-Remaining'),
    reset: read('X-RateLimit-Reset'),
  };
}
