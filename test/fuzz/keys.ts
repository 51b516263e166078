/**
 * Keys for load beyond the fixed plans. An Enterprise key with custom limits (the spec's "Custom" quotas) lets the
 * fuzz, stateful and concurrency runs send thousands of requests a minute WITH the rate limiter on, so every
 * response still carries the X-RateLimit-* headers openapi.json requires and the limiter is on the hot path.
 */
import { randomBytes } from 'node:crypto';
import { MAX_CUSTOM_LIMITS } from '../../contract/plans.ts';
import { generateKey, hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { expect } from 'vitest';
import type { TestApi } from '../helpers/api.ts';
import type { Pet } from './exchange.ts';

export async function enterpriseKey(api: TestApi, owner: string, limits = MAX_CUSTOM_LIMITS): Promise<string> {
  const key = generateKey();
  await createKeyAdminStore(api.storage).upsert({
    hash: hashKey(key),
    keyId: `key_${owner}_${randomBytes(4).toString('hex')}`,
    owner,
    plan: 'enterprise',
    limits,
    status: 'active',
    createdAt: new Date().toISOString(),
  });
  return key;
}

/** Creates a pet through the API with `key` (a fuzz run's known target) and returns it. */
export async function createPetWith(api: TestApi, key: string, pet: Record<string, unknown>): Promise<Pet> {
  const res = await api.call('/pets', { method: 'POST', key, body: JSON.stringify(pet) });
  expect(res.status, `creating ${JSON.stringify(pet)}`).toBe(201);
  return (await res.json()) as Pet;
}
