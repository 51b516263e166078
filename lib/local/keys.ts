/** Development keys for the local server (ANIMAL_STORE_DEV_KEYS), stored like real ones: hash and plan only. */
import { hashKey } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import type { DevKey } from './app.ts';

export async function seedKeys(storage: Storage, keys: readonly DevKey[]): Promise<void> {
  const store = createKeyAdminStore(storage);
  for (const { key, plan } of keys) {
    const hash = hashKey(key);
    await store.upsert({
      hash,
      keyId: `dev_${hash.slice(0, 12)}`,
      owner: 'local-development',
      plan,
      status: 'active',
      createdAt: new Date().toISOString(),
    });
  }
}
