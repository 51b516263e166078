/**
 * The bench's operations are the route table's (bench/lib/bench-ops.ts): every route, and every function the stack
 * deploys, gets a bench event, and each event passes the envelope's own request steps for its route, so the bench
 * measures a request the function serves rather than an early 400.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { GET_PET } from '../../contract/operations/get-pet.ts';
import { ROUTES, matchPath, type Route } from '../../contract/routes.ts';
import { LAMBDA_FUNCTIONS } from '../../lib/config/lambda-entries.ts';
import { declaredInput } from '../../lambdas/shared/declared-input.ts';
import { jsonBody } from '../../lambdas/shared/json-body.ts';
import { validate, type Schemas, type Validated } from '../../lambdas/shared/validation.ts';
import { AUTHORIZER_OP, ROUTE_OPS, bundleOf, expectedStatus, httpRequestOf } from '../../bench/lib/bench-ops.ts';
import { EXPECTED_STATUS, eventFor, proxyEventOf } from '../../bench/lib/events.ts';

const PET = 4242;

/** What the function's envelope hands its handler for the event (its body, validation and declared-input steps). */
async function validatedBy(route: Route, event: APIGatewayProxyEvent): Promise<Validated<unknown, unknown, unknown>> {
  const steps = [
    ...(route.request.body ? jsonBody : []),
    validate(route.request as Schemas<unknown, unknown, unknown>),
    declaredInput(route),
  ] as middy.MiddlewareObj[];
  type Seen = { validated: Validated<unknown, unknown, unknown> };
  const run = middy()
    .use(steps)
    .handler(async (e: unknown) => (e as Seen).validated);
  return (await run(structuredClone(event) as never, {} as Context)) as Validated<unknown, unknown, unknown>;
}

describe('the bench operation set', () => {
  it("is the route table's: each route's sample once, its variants beside it, and the authorizer", () => {
    expect(ROUTE_OPS.filter((o) => !o.variant).map((o) => o.route.operationId)).toEqual(
      ROUTES.map((r) => r.operationId),
    );
    expect(ROUTE_OPS.map((o) => o.op)).toEqual(
      ROUTES.flatMap((r) => [
        r.operationId,
        ...Object.keys(r.sampleVariants ?? {}).map((v) => `${r.operationId}?${v}`),
      ]),
    );
    expect(ROUTE_OPS.map((o) => o.op)).toContain('listPets?status');
    expect(AUTHORIZER_OP.bundle).toBe('authorizer');
  });

  it('has an event and an expected answer for every function the stack deploys, and none for a name it does not', () => {
    for (const fn of LAMBDA_FUNCTIONS) {
      const name = bundleOf(fn.name);
      expect(eventFor(name, { existingId: PET, bearer: 'k' }), name).toBeTruthy();
      const route = ROUTES.find((r) => r.operationId === fn.name);
      expect(EXPECTED_STATUS[name], name).toBe(route ? (route.success?.status ?? 501) : undefined);
    }
    expect(() => eventFor('no-such-function', { existingId: PET, bearer: 'k' })).toThrow(
      /no bench event for no-such-function/,
    );
  });

  it('refuses a route that has neither a success nor a 501 to expect, naming it', () => {
    expect(() => expectedStatus({ ...GET_PET, operationId: 'broken', success: undefined })).toThrow(/broken/);
  });
});

describe.each(ROUTE_OPS.map((o) => [o.op, o] as const))('the bench event of %s', (_name, o) => {
  const event = proxyEventOf(o, PET);

  it('is routed to its operation', () => {
    expect(event.httpMethod).toBe(o.route.method);
    expect(event.resource).toBe(o.route.path);
    expect(matchPath(event.path)?.template).toBe(o.route.path);
  });

  it("passes the function's own request steps, with the sample's values and the pet it is given", async () => {
    const v = await validatedBy(o.route, event);
    if (o.route.request.params) expect(Object.values(v.params as object).map(String)).toContain(String(PET));
    for (const [k, value] of Object.entries(o.sample.query ?? {}))
      expect(String((v.query as Record<string, unknown>)[k])).toBe(value);
    if (o.sample.body !== undefined) expect(v.body).toEqual(o.sample.body);
  });

  it('is the same request over HTTP', () => {
    const http = httpRequestOf(o, PET);
    expect(http.method).toBe(event.httpMethod);
    const url = new URL(http.path, 'http://api.test');
    expect(url.pathname).toBe(event.path);
    expect(Object.fromEntries(url.searchParams)).toEqual(event.queryStringParameters ?? {});
    expect(http.body ?? null).toBe(event.body);
  });
});
