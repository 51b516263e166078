/**
 * A key's standing at the gateway: whether it is banned, and which UTC day it has spent, on a small item of the
 * state table keyed by the hash of the key's secret (`ks#<hash>`), so the authorizer reads it together with the key
 * record in one BatchGetItem: one round trip for a cache miss. A function writes it when its limiter refuses a key
 * as banned or out of its day (the request got that far, so the gateway did not know); the authorizer then denies
 * both, and writes it too: its first Deny of a spent day, and the ban of a spent key that keeps sending
 * (domain/refusal.ts spentRepeat). Keyed by hash, not key id, because the hash is all the authorizer has before it reads: a rotated secret starts with no standing, and its first refused
 * request writes it again.
 */
import { BatchGetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { BanCause } from '../../contract/deny-context.ts';
import type { KeyRecord, Standing, StandingNote, StandingStore } from '../domain/keys.ts';
import { UnavailableError } from '../domain/errors.ts';
import { conditionFailedItem, guarded, type Storage } from './client.ts';
import { KEEP_SECONDS } from './limiter-items.ts';

export const standingKey = (hash: string) => ({ pk: `ks#${hash}` });

/**
 * The standing item's attributes. `adminBanUntil` is the end of the last ban an admin wrote: the ban is the admin's
 * while it equals `banUntil`. A moment, not a flag, so a writer that knows nothing of it (a function of an older
 * release recording a later ban of the limiter's) cannot leave a stale "admin" on another ban.
 */
export interface StandingItem {
  readonly banUntil?: number;
  readonly adminBanUntil?: number;
  readonly spentDay?: number;
  /** When the authorizer first denied the spent day (unix seconds), once per day: domain/refusal.ts spentRepeat. */
  readonly spentDeniedAt?: number;
}

/** The standing an item holds, as the authorizer and the admin tool read it. */
export function standingOf(item: StandingItem | undefined): Standing {
  return {
    ...(item?.banUntil !== undefined ? { bannedUntil: item.banUntil } : {}),
    ...(item?.banUntil !== undefined && item.adminBanUntil === item.banUntil ? { bannedBy: 'admin' as const } : {}),
    ...(item?.spentDay !== undefined ? { spentDay: item.spentDay } : {}),
    ...(item?.spentDeniedAt !== undefined ? { spentDeniedAt: item.spentDeniedAt } : {}),
  };
}

/** Attempts at the items BatchGetItem left unprocessed (throttling) before the key counts as unreadable. */
const BATCH_ATTEMPTS = 3;

/**
 * The key record (read consistently: a revocation shows at once) and its standing, in one BatchGetItem. No record:
 * undefined. A standing left unprocessed after the retries is unknown (the function's limiter still refuses).
 */
export async function readKeyAndStanding(
  { doc, tables }: Storage,
  hash: string,
): Promise<{ record?: KeyRecord; standing?: Standing }> {
  let request: Record<string, { Keys: Array<Record<string, unknown>>; ConsistentRead?: boolean }> = {
    [tables.keys]: { Keys: [{ hash }], ConsistentRead: true },
    [tables.state]: { Keys: [standingKey(hash)], ConsistentRead: true },
  };
  let record: KeyRecord | undefined;
  let standing: Standing | undefined;
  let keyRead = false;
  for (let attempt = 0; attempt < BATCH_ATTEMPTS && Object.keys(request).length; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 10 * 2 ** attempt * (1 + Math.random())));
    const out = await guarded((options) => doc.send(new BatchGetCommand({ RequestItems: request }), options));
    if (tables.keys in request && !out.UnprocessedKeys?.[tables.keys]) {
      keyRead = true;
      record = out.Responses?.[tables.keys]?.[0] as KeyRecord | undefined;
    }
    if (tables.state in request && !out.UnprocessedKeys?.[tables.state]) {
      standing = standingOf(out.Responses?.[tables.state]?.[0] as StandingItem | undefined);
    }
    request = (out.UnprocessedKeys ?? {}) as typeof request;
  }
  if (!keyRead) throw new UnavailableError('KeyLookupUnprocessed');
  return { ...(record ? { record } : {}), ...(standing ? { standing } : {}) };
}

export type { StandingNote } from '../domain/keys.ts';

/**
 * Records a refusal's standing for the gateway. Idempotent (a resend sets the same values; a ban is never shortened),
 * so the SDK may resend it. For a ban, answers who banned the key until that end as the item now records it (the
 * function words its 429 by it): the note's own cause when it was written; the recorded one when the item already
 * held that very end (an admin's ban, recorded by the admin tool before the function saw it); undefined when it holds
 * a later end or is unreadable. An admin's note also marks an end a function recorded first as the admin's.
 */
export async function noteStanding(storage: Storage, hash: string, note: StandingNote): Promise<BanCause | undefined> {
  const ban = 'bannedUntil' in note;
  const admin = ban && note.by === 'admin';
  const until = ban ? note.bannedUntil : note.spentDay + 86_400;
  const update = !ban
    ? { UpdateExpression: 'SET spentDay = :v, expiresAt = :exp' }
    : admin
      ? {
          UpdateExpression: 'SET banUntil = :v, adminBanUntil = :v, expiresAt = :exp',
          ConditionExpression:
            'attribute_not_exists(banUntil) OR banUntil < :v OR (banUntil = :v AND (attribute_not_exists(adminBanUntil) OR adminBanUntil <> :v))',
        }
      : {
          UpdateExpression: 'SET banUntil = :v, expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(banUntil) OR banUntil < :v',
        };
  try {
    await updateStanding(storage, hash, {
      ...update,
      ...(ban ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
      ExpressionAttributeValues: { ':v': ban ? note.bannedUntil : note.spentDay, ':exp': until + KEEP_SECONDS },
    });
    return ban ? (note.by ?? 'limiter') : undefined;
  } catch (err: unknown) {
    // A ban already written until as late or later: nothing to add; the item says whose a ban of that end is.
    if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
    const held = standingOf(conditionFailedItem(err as ConditionalCheckFailedException) as StandingItem | undefined);
    return ban && held.bannedUntil === note.bannedUntil ? (held.bannedBy ?? 'limiter') : undefined;
  }
}

/**
 * Notes when the authorizer last told the key its day is spent (unix seconds, `spentDeniedAt`): its first Deny of the
 * day (`firstOfDay`: written only when the item holds no note of this UTC day, so concurrent and later denials write
 * nothing; a note at the day's first second is a ban that ended with the day before), or the end of a ban it gave
 * the key, after which the key is told again before another ban. On the item the spent day was recorded on (never
 * creating one), so it goes when the item does. A retry writes the same value.
 */
export async function noteSpentTold(storage: Storage, hash: string, atSec: number, firstOfDay: boolean): Promise<void> {
  try {
    await updateStanding(storage, hash, {
      UpdateExpression: 'SET spentDeniedAt = :at',
      ...(firstOfDay
        ? {
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(spentDeniedAt) OR spentDeniedAt <= :day)',
            ExpressionAttributeValues: { ':at': atSec, ':day': atSec - (atSec % 86_400) },
          }
        : { ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':at': atSec } }),
    });
  } catch (err: unknown) {
    // Already noted today (another denial's write came first), or no standing: nothing to add.
    if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
  }
}

/** One update of a key's standing item, through the storage's guarded send. */
function updateStanding(
  { doc, tables }: Storage,
  hash: string,
  input: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
): Promise<unknown> {
  return guarded((options) =>
    doc.send(new UpdateCommand({ TableName: tables.state, Key: standingKey(hash), ...input }), options),
  );
}

/** The StandingStore port on a storage. */
export function createStandingStore(storage: Storage): StandingStore {
  return {
    read: (hash) => readKeyAndStanding(storage, hash),
    note: (hash, note) => noteStanding(storage, hash, note),
    noteSpentTold: (hash, atSec, firstOfDay) => noteSpentTold(storage, hash, atSec, firstOfDay),
  };
}
