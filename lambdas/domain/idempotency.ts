/**
 * Idempotent create: `POST /pets` with an `Idempotency-Key` header.
 *
 * Rules:
 * - The header is optional. Without it nothing here runs (no DynamoDB request is added).
 * - A key is 1-255 printable ASCII characters (0x20-0x7E); anything else, or the header given twice, → 400 (the
 *   envelope checks it, from the header's schema on the route entry: contract/operations/create-pet.ts).
 * - Keys are scoped per API key: the record is identified by (keyId, Idempotency-Key), so one client never sees
 *   (or blocks) another client's key.
 * - The request fingerprint is the SHA-256 of the canonical validated body (zod output, keys sorted): whitespace,
 *   key order and unknown fields do not matter. An omitted `status` and an explicit `"status": "available"` are
 *   different requests (the fingerprint describes what was sent, not what was stored).
 * - Lifecycle of a record: a conditional put claims the key as IN_PROGRESS with a random claim token and an expiry
 *   of IN_PROGRESS_MS; the pet is written together with the record's move to COMPLETED (response stored, expiry
 *   COMPLETED_MS) in one transaction, so a pet never exists without its completed record (no crash window);
 *   if the create fails (the claim's own call included), the IN_PROGRESS record is deleted (only if still ours and
 *   still IN_PROGRESS) so the client can retry at once. A claim that finds its own token (an SDK retry whose first
 *   copy was applied) is claimed, not 409.
 * - A record whose own expiry is in the past counts as absent (DynamoDB's TTL deletes late; `expiresAt` is
 *   housekeeping only).
 * - A live record with another fingerprint → 422 idempotency_key_reused (also while it is in progress);
 *   COMPLETED with the same fingerprint → the stored response (same pet, 201); IN_PROGRESS → 409
 *   idempotency_in_progress with Retry-After.
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
  /** Creates a pet; under the caller's Idempotency-Key when `key` is given, as a plain create (no extra request) when not. */
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
