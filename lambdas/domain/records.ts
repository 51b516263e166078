/**
 * What every resource whose ids the service assigns shares, independent of storage: who created an item (audit),
 * which ids exist (1 to 2^53-1), and the create that takes an allocated id and tries another when one is taken.
 * A resource's own rules (pets.ts) build on these; its store implements the ports (lambdas/storage/item-store.ts).
 */
import { AppError, UnavailableError } from './errors.ts';

/** Who made an item: kept on it for audit (the inventory is shared by every key), never returned by the API. */
export interface Audit {
  /** The creating key's id (never the key itself). */
  readonly createdBy: string;
}

/**
 * A record's field names, from its zod object schema (`Pet.shape`): the one list every mapping of the record (store,
 * replay, create) reads, so a field added to the schema is carried everywhere with no other edit.
 */
export const fieldsOf = <S extends { readonly shape: object }>(schema: S): (keyof S['shape'] & string)[] =>
  Object.keys(schema.shape) as (keyof S['shape'] & string)[];

/**
 * The record as the API shows it, made from any value holding it (a stored item, a stored response, a create's
 * input): the schema's fields and nothing else, so audit fields, a write token or a client's extra never leak out.
 * A field the value lacks (an optional one, or one added after the value was stored) stays absent.
 */
export function recordOf<T>(schema: { readonly shape: object }): (from: object) => T {
  const fields = fieldsOf(schema);
  return (from) => {
    const source = from as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of fields) if (source[f] !== undefined) out[f] = source[f];
    return out as T;
  };
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

/** The write of a create: the storage port every resource with assigned ids has. */
export interface ItemWriter<T> {
  /**
   * Writes a new item; resolves false when the id is already taken by another item (nothing is overwritten). A write
   * that was applied although its answer was lost (the SDK resent it) resolves true: it is this create's item.
   */
  insert(item: T, audit: Audit): Promise<boolean>;
}

/** How many ids a create tries: only a damaged id counter hands out a taken one. */
const CREATE_ATTEMPTS = 3;

/** Creates an item under the next allocated id (`build` makes it from the id), trying another id when one is taken. */
export async function createWithId<T>(
  build: (id: number) => T,
  audit: Audit,
  { store, ids }: { readonly store: ItemWriter<T>; readonly ids: IdAllocator },
): Promise<T> {
  for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
    const item = build(await ids.next());
    if (await store.insert(item, audit)) return item;
  }
  // Only a damaged id counter gets here: not the client's fault, and perhaps over soon, so 503 rather than 500.
  throw new UnavailableError('IdAllocation');
}

/**
 * Whether an int64 from a path can name an item: ids are assigned from 1 to 2^53-1, so any other (a bigint when
 * outside the safe integers, zero, negative) names none, and is answered without a read.
 */
export const isAssignedId = (id: number | bigint): id is number => typeof id === 'number' && id >= 1;

/** The item with this id (any int64 from a path); not_found, saying `notFound`, when none has it. */
export async function findById<T>(
  store: { get(id: number): Promise<T | undefined> },
  id: number | bigint,
  notFound: string,
): Promise<T> {
  const item = isAssignedId(id) ? await store.get(id) : undefined;
  if (item === undefined) throw new AppError('not_found', notFound);
  return item;
}
