/**
 * Pet rules: what create, list and get mean, independent of storage.
 */
import { AppError, UnavailableError } from './errors.ts';
import { DEFAULT_PET_STATUS, PAGE_SIZE, type NewPet, type Pet, type PetStatus } from '../../contract/schemas.ts';

/** Where a page ends; opaque to clients (it travels inside a signed cursor). */
export interface PageKey {
  readonly id: number;
}

export interface PetPage {
  readonly pets: Pet[];
  /** Set when a further page may exist. */
  readonly next?: PageKey;
}

/** Who made a pet: kept on its item for audit (the inventory is shared by every key), never returned by the API. */
export interface PetAudit {
  /** The creating key's id (never the key itself). */
  readonly createdBy: string;
}

/**
 * The storage port for pets (lambdas/storage/pet-store.ts implements it). A use case takes only the methods it calls
 * (`Pick<PetStore, …>`): a read never holds a writer, a create never reads.
 */
export interface PetStore {
  /**
   * Writes a new pet; resolves false when the id is already taken by another pet (nothing is overwritten). A write
   * that was applied although its answer was lost (the SDK resent it) resolves true: it is this create's pet.
   */
  insert(pet: Pet, audit: PetAudit): Promise<boolean>;
  get(id: number): Promise<Pet | undefined>;
  list(query: { limit: number; status?: PetStatus; after?: PageKey }): Promise<PetPage>;
}

/** Hands out unique ids; implementations reserve them in blocks so creates do not share one hot item. */
export interface IdAllocator {
  next(): Promise<number>;
  /**
   * Starts reserving ids now when none are held, without waiting: a function calls it as its container starts, so
   * its first create does not wait for the reservation after the limiter's count (docs/performance.md).
   */
  reserveAhead?(): void;
}

/** Creates a pet from what the client sent: the service assigns its id and the default status. */
export async function createPet(
  input: NewPet,
  audit: PetAudit,
  { store, ids }: { readonly store: Pick<PetStore, 'insert'>; readonly ids: IdAllocator },
): Promise<Pet> {
  // Only the known fields are taken: a client-sent `id` (or anything else) never reaches storage.
  for (let attempt = 0; attempt < 3; attempt++) {
    const pet: Pet = {
      id: await ids.next(),
      name: input.name,
      categoryId: input.categoryId,
      status: input.status ?? DEFAULT_PET_STATUS,
    };
    if (await store.insert(pet, audit)) return pet;
  }
  // Only a damaged id counter gets here: not the client's fault, and perhaps over soon, so 503 rather than 500.
  throw new UnavailableError('IdAllocation');
}

/** The pet with this id: any int64 (a bigint when outside the ids the service assigns); not_found when none has it. */
export async function getPet(store: Pick<PetStore, 'get'>, id: number | bigint): Promise<Pet> {
  // Ids are assigned from 1 to 2^53-1: any other int64 names no pet, without a read.
  const pet = typeof id === 'number' && id >= 1 ? await store.get(id) : undefined;
  if (!pet) throw new AppError('not_found', `No animal has id ${id}.`);
  return pet;
}

/** A page of pets, optionally by status, after a page key; the default page size when none is asked. */
export function listPets(
  store: Pick<PetStore, 'list'>,
  { limit = PAGE_SIZE.default, status, after }: { limit?: number; status?: PetStatus; after?: PageKey },
): Promise<PetPage> {
  return store.list({ limit, status, after });
}
