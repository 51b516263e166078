/**
 * A flood of forged tokens past the authorizer's reserved concurrency must not take a customer down: over HTTP
 * through the local gateway, which caches the authorizer's decision for the template's TTL and runs the authorizer
 * at most at its template's ReservedConcurrentExecutions at once (lib/local/lambda.ts), as Lambda does. Each forged
 * token is a cache miss of the old key's exact shape (the only shape that still costs the authorizer a read, held
 * here for AUTH_READ_DELAY_MS on its own DynamoDB client so that a round's invocations overlap, as a flood's do on
 * AWS). Bounded: ROUNDS rounds of FLOOD_FACTOR x the concurrency, fired at once, each with one customer request.
 *
 * The first test turns the stage throttle off to reach past the reservation at all; the second keeps it, as deployed:
 * the stage's bucket per method is sized so that every method's bucket at once fits the reservation, so a flood meets
 * the gateway's 429 before the authorizer's throttle. Figures of one run (staging template, reserved concurrency 500,
 * 28 Nov 2026): past the reservation, 10,000 forged tokens in 5 rounds of 2,000: 4,007 answered 401 by the
 * authorizer, 5,993 throttled and answered 503 with Retry-After, peak 500, the cached customer 5 of 5 200; through the
 * stage throttle, 6,000 forged: 375 answered 401, 5,625 the gateway's 429, peak 125, the customer 3 of 3 served. How
 * many of a round are throttled depends on how the requests arrive, so only the sums and the bounds are asserted.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AUTHORIZER } from '../../contract/routes.ts';
import { concurrencyOf, type LocalFunction } from '../../lib/local/lambda.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

const ROUNDS = 3;
const FLOOD_FACTOR = 2;
const AUTH_READ_DELAY_MS = 50;

let api: TestApi;
let authorizer: LocalFunction;

beforeAll(async () => {
  // The template's authorizer cache (the helper turns it off by default).
  // Off: the flood must reach past the authorizer's reserved concurrency, which the stage's throttle may stop first.
  api = await startTestApi({ authCacheTtlSeconds: undefined, reservedConcurrency: true, stageThrottle: false });
  authorizer = [...api.functions.values()].find((f) => f.def.name === AUTHORIZER.name)!;
  const slow = (next: (args: { input: object }) => Promise<unknown>) => async (args: { input: object }) => {
    await new Promise((r) => setTimeout(r, AUTH_READ_DELAY_MS));
    return next(args);
  };
  for (const c of [authorizer.runtime.storage.ddb, authorizer.runtime.storage.once.ddb])
    c.middlewareStack.add(slow as never, { step: 'initialize', name: 'slow-key-read' } as never);
});
afterAll(() => api?.close());

/** A token of the old key's exact shape (`ask_` + 43 characters) that nobody was issued. */
const forged = () => `ask_${randomBytes(32).toString('base64url')}`;

it('a flood past the authorizer’s reserved concurrency gets 503s, a customer with a cached decision keeps 200', async () => {
  const reserved = authorizer.def.reservedConcurrency!;
  expect(reserved, 'the template reserves the authorizer’s concurrency').toBeGreaterThan(0);
  const customer = api.keys.pro;
  // The customer's first request fills the gateway's cache with its decision.
  expect((await api.call('/pets?limit=1', { key: customer })).status).toBe(200);
  const c = concurrencyOf(authorizer);
  const invokedBefore = { peak: c.peak, throttled: c.throttled };
  c.peak = 0;

  const forgedStatuses = new Map<string, number>();
  const customerStatuses: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const flood = Array.from({ length: FLOOD_FACTOR * reserved }, () =>
      api.call('/pets?limit=1', { key: forged(), contract: false }),
    );
    // The customer's request in the middle of the round, while the authorizer is saturated.
    const mine = api.call('/pets?limit=1', { key: customer });
    for (const res of await Promise.all(flood)) {
      const { code } = (await res.json()) as { code?: string };
      const retry = res.headers.get('retry-after') ? ' retry-after' : '';
      const k = `${res.status} ${code}${retry}`;
      forgedStatuses.set(k, (forgedStatuses.get(k) ?? 0) + 1);
    }
    const res = await mine;
    customerStatuses.push(res.status);
    await res.arrayBuffer();
  }

  const sent = ROUNDS * FLOOD_FACTOR * reserved;
  const throttled = c.throttled - invokedBefore.throttled;
  // Every forged token is refused: by the authorizer (401) or, past its concurrency, by Lambda (503 + Retry-After).
  expect([...forgedStatuses.keys()].sort()).toEqual(['401 unauthorized', '503 service_unavailable retry-after']);
  expect(forgedStatuses.get('503 service_unavailable retry-after')).toBe(throttled);
  expect(throttled, 'the flood went past the reserved concurrency').toBeGreaterThan(0);
  expect(forgedStatuses.get('401 unauthorized')! + throttled).toBe(sent);
  expect(c.peak, 'never more invocations at once than reserved').toBe(reserved);
  // The customer's cached decision: no authorizer invocation, no throttle, every request served.
  expect(customerStatuses).toEqual(Array.from({ length: ROUNDS }, () => 200));
  console.log(
    `authorizer flood: reserved ${reserved}, ${sent} forged tokens in ${ROUNDS} rounds: ` +
      `${JSON.stringify(Object.fromEntries(forgedStatuses))}, peak ${c.peak}; customer ${customerStatuses.join(',')}`,
  );
});

it('as deployed, with the stage throttle: a flood never reaches past the reservation, so no forged token or customer meets a 5xx', async () => {
  // The stage's bucket per method is sized so that every method's bucket at once fits the authorizer's reservation
  // (lib/config/capacity.ts edgeFor): a flood past it meets the gateway's 429 before the authorizer.
  const staged = await startTestApi({ authCacheTtlSeconds: undefined, reservedConcurrency: true });
  try {
    const fn = [...staged.functions.values()].find((f) => f.def.name === AUTHORIZER.name)!;
    const reserved = fn.def.reservedConcurrency!;
    const customer = staged.keys.pro;
    let t = Date.UTC(2035, 0, 1, 0, 0, 30);
    staged.clock.set(() => t);
    // The customer's cached decision, on another method than the flood's (the flood's own method's bucket is
    // shared with every caller of it: docs/keys-and-limits.md, "What an anonymous flood can still do to everyone").
    expect((await staged.call('/store/orders', { key: customer, contract: false })).status).toBe(501);
    const c = concurrencyOf(fn);
    c.peak = 0;
    const statuses = new Map<string, number>();
    const mine: number[] = [];
    for (let round = 0; round < 3; round++) {
      t += 1_000; // a second between rounds: every bucket full again
      const flood = Array.from({ length: FLOOD_FACTOR * reserved }, () =>
        staged.call('/pets?limit=1', { key: forged(), contract: false }),
      );
      const res = await staged.call('/store/orders', { key: customer, contract: false });
      mine.push(res.status);
      await res.arrayBuffer();
      for (const r of await Promise.all(flood)) {
        const { code } = (await r.json()) as { code?: string };
        statuses.set(`${r.status} ${code}`, (statuses.get(`${r.status} ${code}`) ?? 0) + 1);
      }
    }
    expect([...statuses.keys()].sort()).toEqual(['401 unauthorized', '429 rate_limited']);
    expect(c.peak, 'the authorizer never had more at once than reserved').toBeLessThanOrEqual(reserved);
    expect(mine).toEqual([501, 501, 501]);
    console.log(
      `authorizer flood through the stage throttle: reserved ${reserved}, ${3 * FLOOD_FACTOR * reserved} forged: ` +
        `${JSON.stringify(Object.fromEntries(statuses))}, peak ${c.peak}; customer ${mine.join(',')}`,
    );
  } finally {
    await staged.close();
  }
});
