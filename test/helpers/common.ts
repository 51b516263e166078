/** Small helpers several test files share: response checks. */
import { expect } from 'vitest';

/** The parsed JSON body, untyped: tests index into it freely and assert on what they read. */
// Response bodies are whatever the server sent (any): the assertions check them.
export const jsonOf = (r: Response): Promise<any> => r.json();

/** Asserts `res` is the spec's Error object with this status (and code, when given); returns the body. */
export async function expectError(res: Response, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await jsonOf(res);
  expect(body).toEqual({ code: code ?? expect.any(String), message: expect.any(String), status });
  return body;
}
