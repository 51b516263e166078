/**
 * The envelope's checks of declared request headers and query names (lambdas/shared/declared-input.ts), with
 * createPet's `Idempotency-Key` and listPets' query, and a neutral fixture for a required header.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { CREATE_PET } from '../../contract/operations/create-pet.ts';
import { LIST_ORDERS } from '../../contract/operations/list-orders.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import type { Route } from '../../contract/routes.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import { declaredInput } from '../../lambdas/shared/declared-input.ts';
import type { ApiEvent } from '../../lambdas/shared/validation.ts';

interface Given {
  readonly headers?: Record<string, string[]>;
  readonly query?: Record<string, string[]>;
}

/** What the middleware hands the handler, or the Error it answers with. */
function run(
  route: Route,
  { headers = {}, query }: Given,
): { headers?: unknown; error?: { code: string; message: string } } {
  const event = {
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v[v.length - 1]])),
    multiValueHeaders: headers,
    queryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[0]])) : null,
    multiValueQueryStringParameters: query ?? null,
    validated: { query: undefined, params: undefined, body: undefined, headers: undefined },
  } as unknown as ApiEvent;
  try {
    void declaredInput(route).before!({ event } as never);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { error: { code: err.code, message: err.message } };
  }
  return { headers: event.validated.headers };
}

const key = (...values: string[]) => ({ headers: { 'Idempotency-Key': values } });

describe('declared request headers', () => {
  it('hands the handler a declared header, read whatever the case of its name; absent when optional and not sent', () => {
    expect(run(CREATE_PET, { headers: { 'idempotency-KEY': ['abc'] } }).headers).toEqual({ 'Idempotency-Key': 'abc' });
    expect(run(CREATE_PET, key(' !~{}"a b')).headers).toEqual({ 'Idempotency-Key': ' !~{}"a b' });
    expect(run(CREATE_PET, key('k'.repeat(255))).error).toBeUndefined();
    expect(run(CREATE_PET, { headers: { 'Content-Type': ['application/json'] } }).headers).toEqual({});
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'caf\u00e9'],
    ['emoji', 'key-\u{1F600}'],
    ['tab', 'a\tb'],
    ['DEL', 'a\x7Fb'],
    ['NUL', 'a\x00b'],
    ['newline', 'a\nb'],
  ])('refuses a value that is %s with 400 validation_failed naming the header', (_, value) => {
    expect(run(CREATE_PET, key(value)).error).toMatchObject({
      code: 'validation_failed',
      message: expect.stringMatching(/^Invalid header: Idempotency-Key: /),
    });
  });

  it('refuses a header given twice, whatever the case of the names', () => {
    const twice = { code: 'validation_failed', message: 'Invalid header: Idempotency-Key is given more than once.' };
    expect(run(CREATE_PET, key('a', 'b')).error).toEqual(twice);
    expect(run(CREATE_PET, { headers: { 'Idempotency-Key': ['a'], 'idempotency-key': ['a'] } }).error).toEqual(twice);
  });

  it('refuses a required header that is missing, by name', () => {
    const fixture = {
      ...LIST_ORDERS,
      operationId: 'testRequiredHeader',
      request: { headers: z.object({ 'X-Test-Required': z.string() }) },
    } as const satisfies Route;
    expect(run(fixture, {}).error).toEqual({
      code: 'validation_failed',
      message: 'Invalid header: X-Test-Required is required.',
    });
    expect(run(fixture, { headers: { 'x-test-required': ['v'] } }).headers).toEqual({ 'X-Test-Required': 'v' });
  });
});

describe('query parameter names', () => {
  it('refuses a query parameter the entry does not declare, naming it, like an unknown body field', () => {
    expect(run(LIST_PETS, { query: { Status: ['sold'] } }).error).toEqual({
      code: 'validation_failed',
      message: 'Invalid query: unknown parameter "Status" (known: limit, status, cursor).',
    });
    expect(run(LIST_PETS, { query: { status: ['sold'], limit: ['5'] } }).error).toBeUndefined();
  });

  it('refuses any query parameter on an operation that declares none', () => {
    expect(run(CREATE_PET, { query: { dryRun: ['1'], x: ['2'] } }).error).toEqual({
      code: 'validation_failed',
      message: 'Invalid query: unknown parameters "dryRun", "x": this operation takes none.',
    });
  });
});
