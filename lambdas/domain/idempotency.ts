/**
 * Idempotent create: `POST /pets` with an optional `Idempotency-Key` (1-255 printable ASCII; the envelope checks it
 * from contract/operations/create-pet.ts). Without it nothing here runs.
 * Records are scoped per API key, so one client never sees or blocks another's key. The fingerprint is the SHA-256
 * of the canonical validated body. It describes what was sent: an omitted `status` and `"available"` differ.
 * A conditional put claims the key IN_PROGRESS (a random claim token, IN_PROGRESS_MS). The pet and the record's
 * move to COMPLETED (COMPLETED_MS) are one transaction, so a pet never exists without its record. A failed create
 * deletes its own claim, so the client can retry at once. Finding its own token (an SDK retry) is a claim, not 409.
 * A record past its own expiry is absent (TTL deletes late). A live one answers: another fingerprint → 422
 * idempotency_key_reused; COMPLETED → the stored 201; IN_PROGRESS → 409 idempotency_in_progress with Retry-After.
 */
import canonicalize from 'canonicalize';
import { createHash, randomUUID } from 'node:crypto';
import { AppError } from './errors.ts';
import { createPet, type IdAllocator, type PetAudit, type PetStore } from './pets.ts';
import type { NewPet, Pet } from '../../contract/schemas.ts';

/**
 * How long an attempt holds a key. Longer than any create can run (the function times out at 10 s, API Gateway
 * cuts requests at 29 s), so a live attempt is never overtaken, yet a crashed one frees the key soon. Even if one
 * were overtaken, its transaction fails on the claim token: it never writes a second pet under the key.
 */
export const IN_PROGRESS_MS = 30_000;
/** How long a completed result is replayed. */
export const COMPLETED_MS = 24 * 3_600_000;
/** Retry-After (seconds) on 409: a create normally finishes in milliseconds. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/** Identifies one record: the caller's API key id and the client's Idempotency-Key. */
export interface IdempotencyId {
  readonly keyId: string;
  readonly key: string;
}

export interface StoredResponse {
  readonly statusCode: number;
  readonly body: Pet;
}

export type IdempotencyRecord =
  | {
      readonly status: 'IN_PROGRESS';
      readonly fingerprint: string;
      readonly token: string;
      readonly expiresAtMs: number;
    }
  | {
      readonly status: 'COMPLETED';
      readonly fingerprint: string;
      readonly token: string;
      readonly expiresAtMs: number;
      readonly response: StoredResponse;
    };

/** The pet a first create writes, with the completion of the record that holds its key. */
export interface CompletingWrite {
  readonly id: IdempotencyId;
  /** The claim token the record must still carry. */
  readonly token: string;
  readonly pet: Pet;
  /** What a replay answers, stored with the record. */
  readonly response: StoredResponse;
  readonly expiresAtMs: number;
  readonly audit: PetAudit;
}

/** The storage port for idempotency records. One adapter implements it (lambdas/storage/idempotency-store.ts). */
export interface IdempotencyStore {
  /**
   * Claims the key with an IN_PROGRESS record unless a live record (own expiry > nowMs) exists. Resolves undefined
   * when claimed, or the live record that prevented the claim (read in the same request).
   */
  claim(
    id: IdempotencyId,
    record: IdempotencyRecord & { status: 'IN_PROGRESS' },
    nowMs: number,
  ): Promise<IdempotencyRecord | undefined>;
  /**
   * Writes the pet (only if its id is free) and completes the record (only if it is still IN_PROGRESS under
   * `token`) atomically. Resolves false when the pet id is taken (nothing written); rejects with
   * AppError('idempotency_in_progress') when the claim was lost.
   */
  insertAndComplete(write: CompletingWrite): Promise<boolean>;
  /** Deletes the record if it is still IN_PROGRESS under `token`; otherwise leaves it. */
  release(id: IdempotencyId, token: string): Promise<void>;
}

/**
 * JSON with object keys sorted at every level, as RFC 8785 (JSON Canonicalization Scheme) writes it: equal values give
 * equal text. Its reference implementation (`canonicalize`) gives a validated body the same text the hand-written
 * version gave (keys in UTF-16 order, undefined members left out, numbers and strings as JSON.stringify writes them),
 * so fingerprints stored before stay valid. It throws on NaN, infinities and lone surrogates, which validation has
 * already refused (names must be well-formed Unicode; numbers are integers).
 */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? 'null';
}

/** SHA-256 (hex) of the canonical validated body. */
export function fingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export type Decision =
  { readonly kind: 'replay'; readonly response: StoredResponse } | { readonly kind: 'error'; readonly error: AppError };

/** What to answer when a live record already holds the key. */
export function decide(existing: IdempotencyRecord, requestFingerprint: string): Decision {
  if (existing.fingerprint !== requestFingerprint)
    return { kind: 'error', error: new AppError('idempotency_key_reused') };
  if (existing.status === 'COMPLETED') return { kind: 'replay', response: existing.response };
  return { kind: 'error', error: inProgressError() };
}

/** 409: the first request with this key is still running; retry shortly. */
export function inProgressError(): AppError {
  return new AppError('idempotency_in_progress', undefined, { 'Retry-After': String(IN_PROGRESS_RETRY_AFTER_SECONDS) });
}

export interface IdempotentCreateResult {
  readonly pet: Pet;
  readonly statusCode: number;
  /** True when this is the stored result of an earlier request. */
  readonly replayed: boolean;
}

/** What a handler creates pets with. */
export interface PetCreator {
  /** Creates a pet under the caller's Idempotency-Key if `key` is given, else as a plain create (no extra request). */
  create(input: NewPet, id: { readonly keyId: string; readonly key?: string }): Promise<IdempotentCreateResult>;
}

export interface PetCreatorDeps {
  readonly store: IdempotencyStore;
  readonly pets: Pick<PetStore, 'insert'>;
  readonly ids: IdAllocator;
  readonly clock: () => number;
  readonly newToken?: () => string;
}

/**
 * Creates pets under an Idempotency-Key. DynamoDB requests: 2 for a first create (the claim, then one transaction
 * writing the pet and completing the record; plus the id allocator's amortised 1/1000), 1 for a replay, a 409 or
 * a 422 (the failed conditional claim returns the live record), 2 + the failed writes when the create fails
 * (claim, create, release).
 */
export function createPetCreator({ store, pets, ids, clock, newToken = randomUUID }: PetCreatorDeps): PetCreator {
  return {
    async create(input, { keyId, key }) {
      const audit = { createdBy: keyId };
      if (key === undefined)
        return { pet: await createPet(input, audit, { store: pets, ids }), statusCode: 201, replayed: false };
      const id: IdempotencyId = { keyId, key };
      const fp = fingerprint(input);
      const token = newToken();
      const now = clock();
      const release = () => store.release(id, token).catch(() => undefined);
      const existing = await store
        .claim(id, { status: 'IN_PROGRESS', fingerprint: fp, token, expiresAtMs: now + IN_PROGRESS_MS }, now)
        .catch(async (err: unknown) => {
          // The claim may have been written although the call failed (its answer lost, the deadline reached): free
          // it, or the client's retry would get 409 until it expires. Only a record under this token is deleted.
          await release();
          throw err;
        });
      if (existing) {
        const decision = decide(existing, fp);
        if (decision.kind === 'error') throw decision.error;
        return { pet: decision.response.body, statusCode: decision.response.statusCode, replayed: true };
      }
      // The pet rules stay in one place (createPet); only the write is swapped for the atomic one.
      const atomic = {
        insert: (pet: Pet, who: PetAudit) =>
          store.insertAndComplete({
            id,
            token,
            pet,
            response: { statusCode: 201, body: pet },
            expiresAtMs: clock() + COMPLETED_MS,
            audit: who,
          }),
      };
      try {
        const pet = await createPet(input, audit, { store: atomic, ids });
        return { pet, statusCode: 201, replayed: false };
      } catch (err) {
        // Free the key so the client can retry now. If the transaction did commit (an ambiguous timeout), the record
        // is COMPLETED and the conditional delete leaves it: the retry then gets the stored pet. A failed release is
        // not the client's concern: the record expires after IN_PROGRESS_MS.
        await release();
        throw err;
      }
    },
  };
}
