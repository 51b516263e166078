/**
 * Leased keys with many requests in flight, on DynamoDB Local through the real adapter: overlapping takes through
 * one container and across several admit each full window's whole limit, never more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITER } from '../../contract/plans.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import type { LimitCounters } from '../../lambdas/domain/rate-limit.ts';
import { seeded, simulate } from '../../bench/lib/limiter-sim.ts';
import { expectFullWindowsFilled } from '../helpers/windows.ts';
import { steady } from '../../bench/lib/traffic.ts';
import { quietTelemetry, startTestApi, type TestApi } from '../helpers/api.ts';

let api: TestApi;
let counters: LimitCounters;
beforeAll(async () => {
  api = await startTestApi();
  counters = createLimitStore(api.storage, quietTelemetry());
});
afterAll(() => api?.close());

const limits = { perMinute: 2_000, perDay: 2_880_000 };

describe('an Enterprise key at 2,000/min with many requests in flight, on DynamoDB Local', () => {
  it.each([
    { where: 'one container', inFlight: 40, perContainer: Infinity, serviceMs: 200, day: 0 },
    { where: 'containers of 10', inFlight: 40, perContainer: 10, serviceMs: 200, day: 1 },
    { where: 'one request per container', inFlight: 100, perContainer: 1, serviceMs: 1_000, day: 2 },
  ])('$inFlight in flight, $where: every full window admits 95-100% of the limit', async (c) => {
    const r = await simulate(counters, {
      limits,
      // A day of its own per case (the counters are per key and day) and 7 s into a minute.
      startMs: Date.UTC(2032, 0, 10 + c.day, 9, 0, 7),
      subject: `lease-concurrency-${c.day}-${Date.now()}`,
      traffic: steady((1.2 * limits.perMinute) / 60, 130),
      inFlight: c.inFlight,
      perContainer: c.perContainer,
      serviceMs: c.serviceMs,
      skewMs: LIMITER.maxSkewMs,
      random: seeded(5),
    });
    expectFullWindowsFilled(r, limits);
    expect(r.byStatus.service_unavailable ?? 0).toBe(0);
  });
});
