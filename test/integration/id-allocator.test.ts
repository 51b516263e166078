/**
 * The id allocator reserves a container's first block as the container starts, so a cold create waits for the
 * limiter's count and its own write, not also for the reservation. On DynamoDB Local through the fault proxy: a
 * reservation made ahead serves the first ids without another request; one that failed is tried again by the
 * request; one still hanging holds no request past its deadline.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { createPetHandler } from '../../lambdas/handlers/create-pet.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import { withDeadline } from '../../lambdas/storage/deadline.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { idAllocator as createIdAllocator } from '../../lambdas/storage/item-store.ts';
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let proxy: FaultProxy;
let tableEnv: Record<string, string>;
let storage: Storage;
let counter = 0;
/** A counter item of its own per test, so each allocator starts with no block anywhere. */
const counterKey = () => `ids#test-${++counter}-${Date.now()}`;
const reservations = (key: string) => proxy.log.filter((r) => r.target === 'UpdateItem' && r.body.includes(key));
const settle = async (key: string, n: number) => {
  for (let i = 0; i < 100 && reservations(key).length < n; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
};

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  tableEnv = await provisionLocalTables(inject('dynamoEndpoint'), uniquePrefix());
  storage = localStorage(proxy.url, tableEnv);
});
afterAll(async () => {
  storage?.ddb.destroy();
  await proxy?.close();
});

describe('the first id block, reserved ahead', () => {
  it('serves the first ids with no request of their own', async () => {
    const key = counterKey();
    const ids = createIdAllocator(storage, key);
    ids.reserveAhead!();
    await settle(key, 1);
    expect(reservations(key)).toHaveLength(1);
    expect([await ids.next(), await ids.next()]).toEqual([1, 2]);
    expect(reservations(key)).toHaveLength(1);
  });

  it('is made by a createPet function as it starts, before any request', async () => {
    const rt = createRuntime(loadConfig({ ...tableEnv, DYNAMODB_ENDPOINT: proxy.url, METRICS: 'off' }));
    const before = proxy.log.length;
    createPetHandler(rt);
    for (let i = 0; i < 100 && !proxy.log.slice(before).some((r) => r.body.includes('ids#pets')); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(proxy.log.slice(before).map((r) => [r.target, r.body.includes('ids#pets')])).toEqual([['UpdateItem', true]]);
    rt.storage.ddb.destroy();
  });

  it('when it failed, is made again by the first request that needs an id', async () => {
    const key = counterKey();
    const remove = proxy.add({
      target: 'UpdateItem',
      body: key,
      times: 3, // every attempt of the SDK's
      fault: { kind: 'error', status: 500, type: 'InternalServerError' },
    });
    const ids = createIdAllocator(storage, key);
    ids.reserveAhead!();
    await settle(key, 3);
    remove();
    expect(await ids.next()).toBe(1);
    expect(reservations(key).filter((r) => !r.fault)).toHaveLength(1);
  });

  it('when it hangs, holds a request no longer than its deadline (503, not a Lambda timeout)', async () => {
    const key = counterKey();
    proxy.add({ target: 'UpdateItem', body: key, times: 1, fault: { kind: 'hang' } });
    const ids = createIdAllocator(storage, key);
    ids.reserveAhead!();
    await settle(key, 1);
    const started = performance.now();
    // 1.5 s left: storage work stops 1 s (the cleanup reserve) before it.
    const err = await withDeadline(1_500, () => ids.next()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).cause).toBe('Deadline');
    expect(performance.now() - started).toBeLessThan(1_400);
  });
});
