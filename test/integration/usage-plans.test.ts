/**
 * The usage plans behind the app limiter, as the template deploys them (each plan's bucket, shared by its keys), must
 * never reject a request the app would admit from a client that honours the headers: API Gateway counts every request
 * the authorizer lets through (the app's own 429s included) against the plan's bucket, which sees a whole minute's
 * budget sent at once right after the minute boundary (Developer Guide, "Usage plans" and "Throttle API requests"),
 * all day long. A client that never waits is still stopped by the gateway.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());

/** A 429 the gateway made (THROTTLED): the gateway cannot count, so its X-RateLimit-Limit is 0. */
const byGateway = (r: Response) => r.status === 429 && r.headers.get('x-ratelimit-limit') === '0';

it('never rejects a Free client that sends as fast as it may and waits out every 429 it is told to', async () => {
  // Midnight UTC, a day ahead of any other test's windows: the client spends a whole day's budget, then the next's.
  let t = Math.ceil((Date.now() + 86_400_000) / 86_400_000) * 86_400_000;
  const end = t + 86_400_000 + 3 * 60_000;
  api.clock.set(() => t);
  const statuses = new Map<number, number>();
  while (t < end) {
    const res = await api.call('/pets?limit=1', { contract: false });
    expect(byGateway(res), `gateway rejection at ${new Date(t).toISOString()}: ${await res.clone().text()}`).toBe(
      false,
    );
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    // Honours the headers: after a 429, waits Retry-After; otherwise sends again at once.
    if (res.status === 429) t += Number(res.headers.get('retry-after')) * 1000;
  }
  expect(statuses.get(200)).toBeGreaterThanOrEqual(1_000 + 60);
  expect(statuses.get(429)).toBeGreaterThan(0);
}, 300_000);

it('still stops a client that never waits', async () => {
  const t = Math.ceil((Date.now() + 5 * 86_400_000) / 60_000) * 60_000;
  api.clock.set(() => t);
  let stopped = false;
  for (let i = 0; i < 20_000 && !stopped; i++)
    stopped = byGateway(await api.call('/pets?limit=1', { key: api.keys.pro, contract: false }));
  expect(stopped).toBe(true);
}, 300_000);
