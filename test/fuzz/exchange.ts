/**
 * Fuzzing: sends one generated request over real HTTP (plain fetch, so the fuzzer controls every header,
 * including a missing Content-Type) and checks the invariants every response must keep:
 *
 *   - never a 5xx;
 *   - conforms to openapi.json (test/helpers/contract.ts: declared status, headers, body schema, error code);
 *   - Content-Type application/json; a 4xx carries exactly the Error object with `status` = the HTTP status;
 *   - the status (and error code) the oracle predicted; 2xx bodies echo what was sent.
 */
import { expect } from 'vitest';
import { assertConforms } from '../helpers/contract.ts';
import type { Pet } from '../../contract/schemas.ts';

export interface Expectation {
  /** The status the request must get. */
  readonly status: number;
  /** The Error object's code, when the status is a 4xx. */
  readonly code?: string;
  /** For 405: the exact Allow header. */
  readonly allow?: string;
  /** Extra checks on a success body. */
  readonly check?: (body: unknown, headers: Headers) => void;
}

export interface FuzzRequest {
  readonly method: string;
  /** Below the base path, with the query string, already encoded exactly as it goes on the wire. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as bytes (so fetch adds no Content-Type of its own); undefined = no body. */
  readonly body?: string;
  readonly expect: Expectation;
  /** Why the oracle expects what it expects (shown on failure). */
  readonly why: string;
}

export interface Stats {
  requests: number;
  byStatus: Record<number, number>;
  /** 5xx other than the declared 501 of GET /store/orders. */
  fiveXx: number;
}

export const newStats = (): Stats => ({ requests: 0, byStatus: {}, fiveXx: 0 });

/** A short, printable description of a request for failure messages. */
export function describe(r: FuzzRequest): string {
  const body =
    r.body === undefined ? '' : ` body(${Buffer.byteLength(r.body)}B)=${JSON.stringify(r.body.slice(0, 200))}`;
  return `${r.method} ${r.path.slice(0, 300)} headers=${JSON.stringify(r.headers)}${body} [expect ${r.expect.status}${r.expect.code ? ` ${r.expect.code}` : ''}: ${r.why}]`;
}

export async function send(baseUrl: string, r: FuzzRequest, stats: Stats): Promise<void> {
  const res = await fetch(`${baseUrl}${r.path}`, {
    method: r.method,
    headers: r.headers,
    body: r.body === undefined ? undefined : Buffer.from(r.body, 'utf8'),
  });
  const text = await res.text();
  stats.requests++;
  stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
  const where = `${describe(r)}\n→ ${res.status} ${text.slice(0, 300)}`;

  // The one deliberate 5xx: GET /store/orders answers the declared 501 until its contract is specified.
  const declared501 = res.status === 501 && r.expect.status === 501;
  if (res.status >= 500 && !declared501) stats.fiveXx++;
  if (!declared501) expect(res.status, `5xx: ${where}`).toBeLessThan(500);
  try {
    assertConforms({ method: r.method, path: r.path, status: res.status, headers: res.headers, body: text });
  } catch (err) {
    throw new Error(`${(err as Error).message}\nrequest: ${describe(r)}`, { cause: err });
  }
  expect(res.headers.get('content-type') ?? '', `content type: ${where}`).toMatch(/^application\/json(;|$)/);
  expect(res.status, `status: ${where}`).toBe(r.expect.status);
  if (r.method === 'HEAD') {
    expect(text, where).toBe('');
  } else if (res.status >= 400) {
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body).sort(), `Error object keys: ${where}`).toEqual(['code', 'message', 'status']);
    expect(body.status, where).toBe(res.status);
    expect(typeof body.message === 'string' && body.message.length > 0, where).toBe(true);
    if (r.expect.code) expect(body.code, `code: ${where}`).toBe(r.expect.code);
  }
  if (res.status === 401) expect(res.headers.get('www-authenticate'), where).toBe('Bearer');
  if (res.status === 405) expect(res.headers.get('allow'), `Allow: ${where}`).toBe(r.expect.allow);
  if (res.status < 400 && r.expect.check) r.expect.check(JSON.parse(text), res.headers);
}

/** Runs requests with at most `concurrency` in flight; resolves with the results in order. */
export async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

/** The `rel="next"` target of a Link header, below the base path (`/pets?…`), or undefined. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  if (!link) return undefined;
  const m = /<\/v1(\/pets\?[^>]*)>;\s*rel="next"/.exec(link);
  return m?.[1];
}

export type { Pet };
