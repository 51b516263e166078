/**
 * A pet's fields are declared once, in its zod schemas: this file adds a field to NewPet and Pet (and nothing else)
 * and follows it over HTTP on DynamoDB Local through the create, its idempotent replay, the read and the list. A
 * store, replay or mapping that listed the pet's fields by hand would drop it here.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { jsonOf } from '../helpers/common.ts';
import { storedPetsNamed } from '../helpers/pets-table.ts';
import { localClient } from '../../lambdas/storage/provision.ts';

/** The added field: optional, as a new field on an existing operation must be (clients that do not send it). */
const { FIELD } = vi.hoisted(() => ({ FIELD: 'shelterId' }));

// The one edit a new field takes, made here for this file's module graph alone: every module that imports the
// schemas (the operation entries, the domain, the stores) sees them with the field, none is edited or told of it.
vi.mock('../../contract/schemas.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../contract/schemas.ts')>();
  const z = await import('zod/mini');
  const added = { [FIELD]: z.optional(z.int().check(z.minimum(1))) };
  return { ...real, NewPet: z.extend(real.NewPet, added), Pet: z.extend(real.Pet, added) };
});

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

// openapi.json is the shipped document, without the test's field: the response check against it is left out where a
// body carries the field (the rest of the suite holds the responses to the document).
const call = (path: string, init: RequestInit = {}) =>
  api.call(path, { key: api.keys.business, contract: false, ...init });
const create = (body: object, idempotencyKey: string) =>
  call('/pets', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
  });

/** Every pet the list shows, all pages (the test API's table holds this file's pets only). */
async function listed(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let next: string | undefined = '/pets?limit=100';
  while (next) {
    const res = await call(next);
    expect(res.status).toBe(200);
    out.push(...((await jsonOf(res)) as Record<string, unknown>[]));
    next = /<[^>]*\/v1(\/pets[^>]*)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return out;
}

describe('a field added to the pet schemas only', () => {
  it('is refused by the shipped schema: the field exists in this file alone', async () => {
    const real = await vi.importActual<typeof import('../../contract/schemas.ts')>('../../contract/schemas.ts');
    expect(real.NewPet.safeParse({ name: 'Rex', categoryId: 1, [FIELD]: 7 }).success).toBe(false);
    expect(Object.keys(real.Pet.shape)).not.toContain(FIELD);
  });

  it('is carried through create, idempotent replay, read and list, and stored on the item', async () => {
    const name = `fields-${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const sent = { name, categoryId: 3, [FIELD]: 7 };

    const first = await create(sent, key);
    expect(first.status).toBe(201);
    const pet = await jsonOf(first);
    expect(pet).toEqual({ id: expect.any(Number), ...sent, status: 'available' });

    const replay = await create(sent, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await jsonOf(replay)).toEqual(pet);

    const read = await call(`/pets/${pet.id}`);
    expect(read.status).toBe(200);
    expect(await jsonOf(read)).toEqual(pet);

    expect((await listed()).filter((p) => p.id === pet.id)).toEqual([pet]);

    const client = localClient(api.dynamoEndpoint);
    try {
      const [stored] = await storedPetsNamed(client, api.tableEnv.PETS_TABLE_NAME!, name);
      expect(stored).toMatchObject({ [FIELD]: 7 });
    } finally {
      client.destroy();
    }
  });

  it('stays absent where it was not sent, on every path, and is refused when malformed', async () => {
    const key = randomUUID();
    const sent = { name: `nofield-${randomUUID().slice(0, 8)}`, categoryId: 4, status: 'sold' };
    const pet = await jsonOf(await create(sent, key));
    expect(pet).toEqual({ id: expect.any(Number), ...sent });
    expect(await jsonOf(await create(sent, key))).toEqual(pet);
    expect(await jsonOf(await call(`/pets/${pet.id}`))).toEqual(pet);
    expect((await listed()).filter((p) => p.id === pet.id)).toEqual([pet]);

    // Validation follows the schema too: the field's own rule (a positive integer) is enforced.
    const bad = await create({ name: 'bad', categoryId: 1, [FIELD]: 0 }, randomUUID());
    expect(bad.status).toBe(400);
  });
});
