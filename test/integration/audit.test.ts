/**
 * The inventory is shared by every key, so each pet records which key created it, for audit: the key's id (never
 * the key), on the stored item only, never in an answer of the API.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { storedPetsNamed } from '../helpers/pets-table.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 60_000);
afterAll(() => api?.close());

const keyIdOf = (key: string) => `dev_${hashKey(key).slice(0, 12)}`;

it.each([
  ['without', {}],
  ['with', { 'Idempotency-Key': 'audit-0001' }],
])('a pet created %s an Idempotency-Key records its creating key id, and no answer shows it', async (_w, headers) => {
  const name = `audit-${Object.keys(headers).length}`;
  const created = await api.call('/pets', {
    method: 'POST',
    key: api.keys.pro,
    headers,
    body: JSON.stringify({ name, categoryId: 1 }),
  });
  expect(created.status).toBe(201);
  const pet = (await created.json()) as { id: number };
  const [stored] = await storedPetsNamed(api.storage.ddb, api.tableEnv.PETS_TABLE_NAME!, name);
  expect(stored?.createdBy).toBe(keyIdOf(api.keys.pro));
  expect(JSON.stringify(stored)).not.toContain(api.keys.pro);
  for (const res of [
    await api.call(`/pets/${pet.id}`),
    await api.call('/pets?limit=100'),
    await api.call(`/pets?status=available&limit=100`),
  ]) {
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(name);
    expect(text).not.toContain('createdBy');
    expect(text).not.toContain(keyIdOf(api.keys.pro));
  }
});
