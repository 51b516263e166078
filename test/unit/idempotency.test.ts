/** The idempotency rules (lambdas/domain/idempotency.ts), without storage. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lambdas/domain/errors.ts';
import {
  COMPLETED_MS,
  IN_PROGRESS_MS,
  canonicalJson,
  createPetCreator,
  decide,
  fingerprint,
  type IdempotencyId,
  type IdempotencyRecord,
  type IdempotencyStore,
} from '../../lambdas/domain/idempotency.ts';
import type { IdAllocator, PetStore } from '../../lambdas/domain/pets.ts';
import type { Pet } from '../../contract/schemas.ts';

describe('fingerprint', () => {
  it('ignores key order and is a SHA-256 hex digest', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[2,{"e":0,"f":1}]},"b":1}',
    );
    expect(fingerprint({ name: 'Rex', categoryId: 1 })).toBe(fingerprint({ categoryId: 1, name: 'Rex' }));
    expect(fingerprint({ name: 'Rex', categoryId: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs for any different value, including an explicit default', () => {
    const base = fingerprint({ name: 'Rex', categoryId: 1 });
    expect(fingerprint({ name: 'Rex', categoryId: 2 })).not.toBe(base);
    expect(fingerprint({ name: 'rex', categoryId: 1 })).not.toBe(base);
    expect(fingerprint({ name: 'Rex', categoryId: 1, status: 'available' })).not.toBe(base);
    expect(fingerprint({ name: 'Rex', categoryId: '1' })).not.toBe(base);
    // An undefined field is the same as an absent one (zod output may carry it).
    expect(fingerprint({ name: 'Rex', categoryId: 1, status: undefined })).toBe(base);
  });
});

describe('decide', () => {
  const pet: Pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };
  const completed: IdempotencyRecord = {
    status: 'COMPLETED',
    fingerprint: 'f',
    token: 't',
    expiresAtMs: 1,
    response: { statusCode: 201, body: pet },
  };
  const inProgress: IdempotencyRecord = { status: 'IN_PROGRESS', fingerprint: 'f', token: 't', expiresAtMs: 1 };

  it('replays a completed record with the same fingerprint', () => {
    expect(decide(completed, 'f')).toEqual({ kind: 'replay', response: { statusCode: 201, body: pet } });
  });

  it('answers 422 for another fingerprint, completed or in progress', () => {
    for (const r of [completed, inProgress]) {
      const d = decide(r, 'g');
      expect(d.kind === 'error' && d.error.code).toBe('idempotency_key_reused');
      expect(d.kind === 'error' && d.error.status).toBe(422);
    }
  });

  it('answers 409 with Retry-After while in progress', () => {
    const d = decide(inProgress, 'f');
    expect(d.kind === 'error' && [d.error.code, d.error.status, d.error.headers['Retry-After']]).toEqual([
      'idempotency_in_progress',
      409,
      '1',
    ]);
  });
});

/** An in-memory port with DynamoDB's semantics for the conditions used (test double for the domain, not a client). */
function memoryStore() {
  const records = new Map<string, IdempotencyRecord>();
  const pets = new Map<number, Pet>();
  const calls: string[] = [];
  const k = (id: IdempotencyId) => `${id.keyId}#${id.key}`;
  let failInsert: Error | undefined;
  const store: IdempotencyStore = {
    async claim(id, record, nowMs) {
      calls.push('claim');
      const old = records.get(k(id));
      if (old && old.expiresAtMs > nowMs) return old;
      records.set(k(id), record);
      return undefined;
    },
    async insertAndComplete({ id, token, pet, response, expiresAtMs }) {
      calls.push('insertAndComplete');
      if (failInsert) throw failInsert;
      const r = records.get(k(id));
      if (r?.status !== 'IN_PROGRESS' || r.token !== token) throw new AppError('idempotency_in_progress');
      if (pets.has(pet.id)) return false;
      pets.set(pet.id, pet);
      records.set(k(id), { status: 'COMPLETED', fingerprint: r.fingerprint, token, expiresAtMs, response });
      return true;
    },
    async release(id, token) {
      calls.push('release');
      const r = records.get(k(id));
      if (r?.status === 'IN_PROGRESS' && r.token === token) records.delete(k(id));
    },
  };
  // What the creator takes of the pet store: its insert, which the idempotent path never calls.
  const petStore: Pick<PetStore, 'insert'> = {
    insert: async () => {
      throw new Error('the idempotent path writes through insertAndComplete only');
    },
  };
  return { store, petStore, records, pets, calls, failNextInserts: (e?: Error) => (failInsert = e) };
}

function setup(startIds = [1]) {
  const mem = memoryStore();
  let t = 1_000_000;
  const queue = [...startIds];
  let next = Math.max(...startIds) + 1;
  const ids: IdAllocator = { next: async () => queue.shift() ?? next++ };
  let n = 0;
  const creator = createPetCreator({
    store: mem.store,
    pets: mem.petStore,
    ids,
    clock: () => t,
    newToken: () => `tok${++n}`,
  });
  return { ...mem, creator, advance: (ms: number) => (t += ms), now: () => t };
}

describe('createPetCreator', () => {
  const id = { keyId: 'k1', key: 'abc' };
  const input = { name: 'Rex', categoryId: 1 };

  it('creates once and replays the stored response, one port call per replay', async () => {
    const s = setup();
    const first = await s.creator.create(input, id);
    expect(first).toEqual({
      pet: { id: 1, name: 'Rex', categoryId: 1, status: 'available' },
      statusCode: 201,
      replayed: false,
    });
    expect(s.calls).toEqual(['claim', 'insertAndComplete']);
    const again = await s.creator.create({ categoryId: 1, name: 'Rex' }, id);
    expect(again).toEqual({ ...first, replayed: true });
    expect(s.calls).toEqual(['claim', 'insertAndComplete', 'claim']);
    expect(s.pets.size).toBe(1);
    expect(s.records.get('k1#abc')).toMatchObject({ status: 'COMPLETED', expiresAtMs: s.now() + COMPLETED_MS });
  });

  it('rejects another body under the same key with 422', async () => {
    const s = setup();
    await s.creator.create(input, id);
    await expect(s.creator.create({ ...input, categoryId: 2 }, id)).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
  });

  it('answers 409 while in progress, and takes over a crashed attempt after IN_PROGRESS_MS', async () => {
    const s = setup();
    await s.store.claim(
      id,
      { status: 'IN_PROGRESS', fingerprint: fingerprint(input), token: 'dead', expiresAtMs: s.now() + IN_PROGRESS_MS },
      s.now(),
    );
    await expect(s.creator.create(input, id)).rejects.toMatchObject({ code: 'idempotency_in_progress', status: 409 });
    s.advance(IN_PROGRESS_MS - 1);
    await expect(s.creator.create(input, id)).rejects.toMatchObject({ code: 'idempotency_in_progress' });
    s.advance(1);
    expect((await s.creator.create(input, id)).replayed).toBe(false);
    expect(s.pets.size).toBe(1);
  });

  it('treats a completed record past its own expiry as absent', async () => {
    const s = setup();
    const first = await s.creator.create(input, id);
    s.advance(COMPLETED_MS - 1);
    expect((await s.creator.create(input, id)).pet).toEqual(first.pet);
    s.advance(1);
    const later = await s.creator.create(input, id);
    expect(later.replayed).toBe(false);
    expect(later.pet.id).not.toBe(first.pet.id);
  });

  it('keeps keys apart per API key', async () => {
    const s = setup();
    const a = await s.creator.create(input, { keyId: 'k1', key: 'same' });
    const b = await s.creator.create({ ...input, name: 'Other' }, { keyId: 'k2', key: 'same' });
    expect(b.replayed).toBe(false);
    expect(b.pet.id).not.toBe(a.pet.id);
  });

  it('tries another id when the allocated one is taken, within the same claim', async () => {
    const s = setup([5, 5, 6]);
    s.pets.set(5, { id: 5, name: 'Taken', categoryId: 1, status: 'sold' });
    const r = await s.creator.create(input, id);
    expect(r.pet.id).toBe(6);
    expect(s.calls).toEqual(['claim', 'insertAndComplete', 'insertAndComplete', 'insertAndComplete']);
  });

  it('releases the key when the create fails, so a retry creates the pet', async () => {
    const s = setup();
    const outage = new AppError('service_unavailable');
    s.failNextInserts(outage);
    await expect(s.creator.create(input, id)).rejects.toBe(outage);
    expect(s.calls).toEqual(['claim', 'insertAndComplete', 'release']);
    expect(s.records.has('k1#abc')).toBe(false);
    s.failNextInserts(undefined);
    expect((await s.creator.create(input, id)).replayed).toBe(false);
  });

  it('reports the create failure even when the release fails too', async () => {
    const s = setup();
    const outage = new Error('create failed');
    s.failNextInserts(outage);
    s.store.release = async () => {
      throw new Error('release failed');
    };
    await expect(s.creator.create(input, id)).rejects.toBe(outage);
  });
});
