/**
 * What a request cut off by a DynamoDB timeout costs its caller (docs/keys-and-limits.md, "Deadline"): it is always a
 * 503 Error object with Retry-After; it counts against the key's limits exactly when the limiter counted it before the
 * timeout, as every admitted request does, and not when it never got past the authorizer. The timed-out write is never
 * resent (a resend could count it twice), so it counts at most once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let api: TestApi;
let proxy: FaultProxy;
beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  api = await startTestApi({ dynamoEndpoint: proxy.url, env: { DYNAMODB_TIMEOUT_MS: '500' } });
  // One minute window for the whole file: the service's clock starts just after a minute begins and runs at a
  // twentieth of real time, so the counts compared below never straddle a window's reset.
  const start = (Math.floor(Date.now() / 60_000) + 1) * 60_000 + 1_000;
  const real = Date.now();
  api.clock.set(() => start + Math.floor((Date.now() - real) / 20));
}, 60_000);
afterAll(async () => {
  await api?.close();
  await proxy?.close();
});

/** The Pro key's remaining requests this minute, as a plain list call reports it. */
const remaining = async () =>
  Number((await api.call('/pets', { key: api.keys.pro })).headers.get('x-ratelimit-remaining'));

/** A DynamoDB call of one kind held past the 500 ms timeout, then applied (as a slow DynamoDB does). */
async function timedOut(target: string, body: string | undefined, request: () => Promise<Response>) {
  await remaining(); // warm: the key's minute is open and the authorizer has read the key
  const before = await remaining();
  // Every attempt of it: reads are resent by the SDK (up to 3 attempts), counting writes never are.
  const remove = proxy.add({ target, ...(body ? { body } : {}), fault: { kind: 'delay', ms: 2_000 } });
  const res = await request();
  remove();
  await sleep(2_200); // the held call lands
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // `before` was read by the call that reported it; the next list call is one more.
  return { res, charged: before - (await remaining()) - 1 };
}

const list = () => api.call('/pets', { key: api.keys.pro, contract: false });

it('a timed-out limiter write: 503 + Retry-After, the request counted once (its write stands, never resent)', async () => {
  const { res, charged } = await timedOut('UpdateItem', 'rl#', list);
  expect(res.headers.get('x-ratelimit-limit')).toBe('300');
  expect(charged).toBe(1);
});

it('a timed-out read after admission: 503 + Retry-After with the counted rate-limit headers; counted once', async () => {
  const { res, charged } = await timedOut('Scan', undefined, list);
  expect(res.headers.get('x-ratelimit-limit')).toBe('300');
  expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
  expect(charged).toBe(1);
});

it("a timed-out key lookup in the authorizer: the gateway's 503 + Retry-After, not counted", async () => {
  const { res, charged } = await timedOut('BatchGetItem', undefined, list);
  expect(res.headers.get('x-ratelimit-limit')).toBe('0');
  expect(charged).toBe(0);
});
