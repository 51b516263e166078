/**
 * Pet rules: what create, list and get mean, independent of storage.
 */
import { createWithId, findById, recordOf, type Audit, type IdAllocator, type ItemWriter } from './records.ts';
import { DEFAULT_PET_STATUS, PAGE_SIZE, Pet, type NewPet, type PetStatus } from '../../contract/schemas.ts';
import type { PageKey } from './pagination.ts';

/** A pet as the API shows it, from anything holding one: the Pet schema's fields, nothing else (records.ts). */
export const petOf = recordOf<Pet>(Pet);

/** Where a page ends: every list operation's (pagination.ts). */
export type { PageKey } from './pagination.ts';

export interface PetPage {
  readonly pets: Pet[];
  /** Set when a further page may exist. */
  readonly next?: PageKey;
}

export type { IdAllocator } from './records.ts';
/** Who made a pet (records.ts). */
export type PetAudit = Audit;

/**
 * The storage port for pets (lambdas/storage/pet-store.ts implements it). A use case takes only the methods it calls
 * (`Pick<PetStore, …>`): a read never holds a writer, a create never reads.
 */
export interface PetStore extends ItemWriter<Pet> {
  get(id: number): Promise<Pet | undefined>;
  list(query: { limit: number; status?: PetStatus; after?: PageKey }): Promise<PetPage>;
}

/** Creates a pet from what the client sent: the service assigns its id and the default status. */
export async function createPet(
  input: NewPet,
  audit: PetAudit,
  { store, ids }: { readonly store: Pick<PetStore, 'insert'>; readonly ids: IdAllocator },
): Promise<Pet> {
  // Only the Pet's fields are taken, the id and status the service's own: a client-sent `id` (or anything else)
  // never reaches storage, and a field the schemas gain is carried with no edit here.
  const pet = (id: number): Pet => petOf({ ...input, id, status: input.status ?? DEFAULT_PET_STATUS });
  return createWithId(pet, audit, { store, ids });
}

/** The pet with this id: any int64 (a bigint when outside the ids the service assigns); not_found when none has it. */
export async function getPet(store: Pick<PetStore, 'get'>, id: number | bigint): Promise<Pet> {
  return findById(store, id, `No animal has id ${id}.`);
}

/** A page of pets, optionally by status, after a page key; the default page size when none is asked. */
export function listPets(
  store: Pick<PetStore, 'list'>,
  { limit = PAGE_SIZE.default, status, after }: { limit?: number; status?: PetStatus; after?: PageKey },
): Promise<PetPage> {
  return store.list({ limit, status, after });
}
