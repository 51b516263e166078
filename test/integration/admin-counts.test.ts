/**
 * A key's counts survive plan and limit changes: crossing 100,000/min changes how many counter items (shards) the
 * limiter splits a key over, and `keys set-plan` carries the day's count to the new layout, so `keys usage`, its
 * minute history and the limiter itself (the real one, on DynamoDB Local) see the same day whichever way the line is
 * crossed.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITER, limiterShards, type PlanLimits } from '../../contract/plans.ts';
import { createLimiter } from '../../lambdas/domain/limiter.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import { hourKey, shardKey } from '../../lambdas/storage/limiter-items.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { quietTelemetry, type TestApi } from '../helpers/api.ts';
import { startLocalAdmin } from '../helpers/admin.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

const NOW = Date.UTC(2034, 5, 6, 15, 30, 10);
const w = windowsAt(NOW);
const HIGH: PlanLimits = { perMinute: 150_000, perDay: 300_000 };
const LOW: PlanLimits = { perMinute: 50_000, perDay: 300_000 };

/** Requests the real limiter (a fresh container's) admits for the key out of `tries`, now. */
async function admitted(keyId: string, limits: PlanLimits, tries: number): Promise<number> {
  const limiter = createLimiter(createLimitStore(api.storage, quietTelemetry()));
  let n = 0;
  for (let i = 0; i < tries; i++) if ((await limiter.consume(keyId, limits, w)).allowed) n++;
  return n;
}

it('the day count, its history and the limiter hold across 100,000/min, down and back up', async () => {
  expect(LIMITER.shardPerMinute).toBe(100_000);
  expect([limiterShards(HIGH), limiterShards(LOW)]).toEqual([2, 1]);
  const admin = keyAdmin({ ...deps, now: () => NOW });
  const { record } = await admin.create({ owner: 'heavy', plan: 'enterprise', ...HIGH });
  const { keyId } = record;
  // Today so far on two shards, as the limiter leaves them: 299,990 of 300,000, with their minute history.
  const earlier = w.minuteStart - 600;
  const hour = earlier - (earlier % 3600);
  const slot = `m${(earlier - hour) / 60}`;
  for (const [shard, d] of [
    [0, 150_000],
    [1, 149_990],
  ] as const) {
    const put = (Item: Record<string, unknown>) =>
      api.storage.doc.send(new PutCommand({ TableName: api.storage.tables.state, Item }));
    await put({ ...shardKey(keyId, w.dayStart, shard), ms: earlier, m: 0, d });
    await put({ ...hourKey(keyId, hour, shard), [slot]: d });
  }
  const today = async () => {
    const u = await admin.usage(keyId);
    const opens = await deps.history!(keyId, u.limits!, w);
    return { day: u.day.count, history: opens.at(-1)?.dayCount };
  };
  expect(await today()).toEqual({ day: 299_990, history: 299_990 });

  // Down to one shard: the day stays 299,990 and the limiter admits the 10 left, not a fresh half day.
  await admin.setPlan(keyId, { plan: 'enterprise', ...LOW });
  expect(await today()).toEqual({ day: 299_990, history: 299_990 });
  expect(await admitted(keyId, LOW, 30)).toBe(10);
  expect((await today()).day).toBe(300_000);

  // Back up to two shards: the day is spent on both, none is admitted.
  await admin.setPlan(keyId, { plan: 'enterprise', ...HIGH });
  expect((await today()).day).toBe(300_000);
  expect(await admitted(keyId, HIGH, 30)).toBe(0);
  expect((await today()).day).toBe(300_000);
});
