/**
 * Development keys for the local server (ANIMAL_STORE_DEV_KEYS), stored like real ones: hash and plan only. A key
 * already stored (ANIMAL_STORE_DATA_DIR keeps DynamoDB Local's data across restarts) keeps what was done to it: a
 * revoked key stays revoked on restart, and only a changed plan is applied.
 */
import { hashKey } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { createKeyAdminStore, createKeyStore } from '../../lambdas/storage/key-store.ts';
import type { DevKey } from './app.ts';

/** Seeds the keys; returns the ones left as they were because they are no longer active (revoked). */
export async function seedKeys(storage: Storage, keys: readonly DevKey[]): Promise<DevKey[]> {
  const store = createKeyAdminStore(storage);
  const reader = createKeyStore(storage);
  const inactive: DevKey[] = [];
  for (const dev of keys) {
    const hash = hashKey(dev.key);
    const existing = await reader.getByHash(hash);
    if (existing && existing.status !== 'active') {
      inactive.push(dev);
      continue;
    }
    if (existing?.plan === dev.plan) continue;
    await store.upsert({
      hash,
      keyId: `dev_${hash.slice(0, 12)}`,
      owner: 'local-development',
      status: 'active',
      createdAt: new Date().toISOString(),
      ...existing,
      plan: dev.plan,
    });
  }
  return inactive;
}
