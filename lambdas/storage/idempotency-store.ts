/**
 * The DynamoDB adapter for idempotency records (rules: lambdas/domain/idempotency.ts). One state-table item per
 * (API key, Idempotency-Key), keyed `idem#<keyId>#<idempotencyKey>`. Its `expiresAtMs` decides; `expiresAt` is TTL
 * (seconds), housekeeping only, as DynamoDB deletes late.
 * - claim: 1 conditional PutItem. A failed condition returns the live record, so a replay, a 409 or a 422 costs no
 *   read. A record with this attempt's own claim token was applied by an SDK retry's first copy: claimed, not 409.
 * - insertAndComplete: 1 TransactWriteItems (pet Put if the id is free, record Update if still ours), 2 WCU per
 *   item. Retried, as a fresh request, only on a transaction conflict.
 * - release: 1 conditional DeleteItem, only after a failed create.
 * A first create with the header is 2 requests against 1 without (plus the limiter's 1, the id allocator's 1 per 1000).
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { UnavailableError } from '../domain/errors.ts';
import {
  inProgressError,
  type CompletingWrite,
  type IdempotencyId,
  type IdempotencyRecord,
  type IdempotencyStore,
} from '../domain/idempotency.ts';
import { petOf } from '../domain/pets.ts';
import { conditionFailedItem, guarded, withStorage, type Storage } from './client.ts';

const CONFLICT_ATTEMPTS = 3;

export const idempotencyPk = ({ keyId, key }: IdempotencyId): string => `idem#${keyId}#${key}`;

const ttlSeconds = (ms: number): number => Math.ceil(ms / 1000);

function toRecord(item: Record<string, unknown>): IdempotencyRecord {
  const base = {
    fingerprint: String(item.fingerprint),
    token: String(item.token),
    expiresAtMs: Number(item.expiresAtMs),
  };
  if (item.status === 'COMPLETED') {
    const r = item.response as { statusCode: number; body: object };
    // The stored pet as the first answer showed it: every field of the Pet schema, read from there (never listed here).
    return { ...base, status: 'COMPLETED', response: { statusCode: Number(r.statusCode), body: petOf(r.body) } };
  }
  return { ...base, status: 'IN_PROGRESS' };
}

async function claim(
  storage: Storage,
  id: IdempotencyId,
  record: IdempotencyRecord & { status: 'IN_PROGRESS' },
  nowMs: number,
): Promise<IdempotencyRecord | undefined> {
  const { doc, tables } = storage;
  try {
    await guarded((options) =>
      doc.send(
        new PutCommand({
          TableName: tables.state,
          Item: {
            pk: idempotencyPk(id),
            status: record.status,
            fingerprint: record.fingerprint,
            token: record.token,
            expiresAtMs: record.expiresAtMs,
            expiresAt: ttlSeconds(record.expiresAtMs),
          },
          // A record past its own expiry counts as absent and is overwritten.
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAtMs <= :now',
          ExpressionAttributeValues: { ':now': nowMs },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        options,
      ),
    );
    return undefined;
  } catch (err) {
    const existing = err instanceof ConditionalCheckFailedException ? conditionFailedItem(err) : undefined;
    // Our own claim: the SDK resent the put after its answer was lost, and the first copy was applied.
    if (existing?.token === record.token && existing.status === 'IN_PROGRESS') return undefined;
    if (existing) return toRecord(existing);
    // The record is being completed by a transaction right now: the first request is still in flight.
    if (err instanceof TransactionConflictException) throw inProgressError();
    throw err;
  }
}

async function insertAndComplete(
  storage: Storage,
  { id, token, pet, response, expiresAtMs, audit }: CompletingWrite,
): Promise<boolean> {
  const { doc, tables } = storage;
  for (let attempt = 1; ; attempt++) {
    try {
      await guarded((options) =>
        doc.send(
          new TransactWriteCommand({
            // Makes the SDK's own retries of this request idempotent (a timed-out attempt that did commit).
            ClientRequestToken: randomUUID(),
            TransactItems: [
              {
                Put: {
                  TableName: tables.pets,
                  Item: { ...pet, ...audit },
                  ConditionExpression: 'attribute_not_exists(id)',
                },
              },
              {
                Update: {
                  TableName: tables.state,
                  Key: { pk: idempotencyPk(id) },
                  UpdateExpression: 'SET #s = :done, #r = :resp, expiresAtMs = :exp, expiresAt = :ttl',
                  ConditionExpression: '#s = :progress AND #t = :token',
                  ExpressionAttributeNames: { '#s': 'status', '#r': 'response', '#t': 'token' },
                  ExpressionAttributeValues: {
                    ':done': 'COMPLETED',
                    ':progress': 'IN_PROGRESS',
                    ':token': token,
                    ':resp': response,
                    ':exp': expiresAtMs,
                    ':ttl': ttlSeconds(expiresAtMs),
                  },
                },
              },
            ],
          }),
          options,
        ),
      );
      return true;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const [petReason, recordReason] = (err.CancellationReasons ?? []).map((r) => r?.Code ?? 'None');
      // Our claim was taken over (it expired): another attempt owns the key now.
      if (recordReason === 'ConditionalCheckFailed') throw inProgressError();
      if (petReason === 'ConditionalCheckFailed') return false; // the id is taken: the caller tries another
      if (petReason === 'TransactionConflict' || recordReason === 'TransactionConflict') {
        // A concurrent single write touched an item (e.g. a duplicate's failing claim): short jittered retry.
        if (attempt < CONFLICT_ATTEMPTS) {
          // The global timer, not node:timers/promises: that import costs createPet ~0.45 ms of every cold start.
          await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.floor(Math.random() * 20)));
          continue;
        }
        throw new UnavailableError('TransactionConflict');
      }
      if ([petReason, recordReason].some((c) => c === 'ThrottlingError' || c === 'ProvisionedThroughputExceeded')) {
        throw new UnavailableError(petReason === 'None' ? recordReason! : petReason!);
      }
      throw err;
    }
  }
}

async function release(storage: Storage, id: IdempotencyId, token: string): Promise<void> {
  const { doc, tables } = storage;
  try {
    // Runs after a failed create, possibly at the request's deadline: it may use the time kept for cleanup.
    await guarded(
      (options) =>
        doc.send(
          new DeleteCommand({
            TableName: tables.state,
            Key: { pk: idempotencyPk(id) },
            ConditionExpression: '#s = :progress AND #t = :token',
            ExpressionAttributeNames: { '#s': 'status', '#t': 'token' },
            ExpressionAttributeValues: { ':progress': 'IN_PROGRESS', ':token': token },
          }),
          options,
        ),
      { cleanup: true },
    );
  } catch (err) {
    // Completed (an ambiguous failure that did commit) or taken over: not ours to delete.
    if (err instanceof ConditionalCheckFailedException) return;
    throw err;
  }
}

export function createIdempotencyStore(storage: Storage): IdempotencyStore {
  return {
    claim: withStorage(storage, claim),
    insertAndComplete: withStorage(storage, insertAndComplete),
    release: withStorage(storage, release),
  };
}
