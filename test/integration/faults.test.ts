/**
 * Faults: DynamoDB paused (SIGSTOP) or throttling. Requests answer promptly with 503 + Retry-After and
 * the Error object, never a hang or a 500; the authorizer fails closed; the service recovers without a restart;
 * a create cut off mid-way leaves no half-written pet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, readsKeys, throttlingException } from '../helpers/clients.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';

let api: TestApi;
const body = JSON.stringify({ name: 'Fault', categoryId: 1 });
/** The functions' log and EMF lines. */
const lines: string[] = [];

beforeAll(async () => {
  // A DynamoDB Local of its own (dynamoEndpoint undefined), since this file pauses it; short timeouts; metrics on.
  api = await startTestApi({
    dynamoEndpoint: undefined,
    env: { DYNAMODB_TIMEOUT_MS: '500', METRICS: 'on' },
    log: (line) => lines.push(line),
  });
  // A DynamoDB Local that just started answers its first requests slowly (its JVM warming up); counting writes are
  // not resent after a timeout (a resend could count twice), so warm it up before the scenarios.
  for (let i = 0; i < 5 && (await api.call('/pets', { key: api.keys.pro })).status !== 200; i++);
});
afterAll(() => api?.close());

async function timed(p: Promise<Response>) {
  const t = Date.now();
  const res = await p;
  return { res, ms: Date.now() - t, body: (await res.json()) as Record<string, unknown> };
}

describe('DynamoDB unavailable', () => {
  it('answers 503 with Retry-After within a bounded time, fails closed, and recovers without a restart', async () => {
    const created = (await (await api.call('/pets', { method: 'POST', body, key: api.keys.business })).json()) as {
      id: number;
    };
    api.dynamo!.pause();
    try {
      const attempts = await Promise.all([
        timed(api.call('/pets', { key: api.keys.business })),
        timed(api.call('/pets', { method: 'POST', body, key: api.keys.business })),
        timed(api.call(`/pets/${created.id}`, { key: api.keys.business })),
        // An issued key's shape that storage has never seen: only a storage read could refuse it, so it fails closed
        // (a token of no issued shape is refused with no read, 401, outage or not).
        timed(api.call('/pets', { key: generateKey() })),
      ]);
      for (const a of attempts) {
        expect(a.res.status).toBe(503);
        expect(a.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
        expect(Number(a.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(a.ms).toBeLessThan(10_000); // 3 attempts of 500 ms plus backoff; far under API Gateway's 29 s
      }
    } finally {
      api.dynamo!.resume();
    }
    const after = await api.call(`/pets/${created.id}`, { key: api.keys.business });
    expect(after.status).toBe(200);
    // Whatever the cut-off create did, no pet is half-written.
    const all = (await (await api.call('/pets?limit=100', { key: api.keys.business })).json()) as Array<
      Record<string, unknown>
    >;
    for (const p of all) expect(Object.keys(p).sort()).toEqual(['categoryId', 'id', 'name', 'status']);
  });
});

describe('DynamoDB throttling', () => {
  it('answers 503 with Retry-After and counts it as a metric', async () => {
    let throttle = 100;
    lines.length = 0;
    const remove = onEveryClient(
      api,
      'injectThrottling',
      (next) => async (args) => {
        // Throttle the operation's tables (the authorizer's key lookup has its own test above).
        if (!readsKeys(args.input) && throttle-- > 0) {
          throw throttlingException();
        }
        return next(args);
      },
      'finalizeRequest',
    );
    try {
      const res = await api.call('/pets', { key: api.keys.business });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
      const emf = lines.filter((l) => l.includes('"StorageUnavailable"'));
      expect(emf.length).toBeGreaterThan(0);
    } finally {
      remove();
    }
    expect((await api.call('/pets', { key: api.keys.business })).status).toBe(200);
  });
});
