/**
 * A key's standing at the gateway: whether it is banned, and which UTC day it has spent, on a small item of the
 * state table keyed by the hash of the key's secret (`ks#<hash>`), so the authorizer reads it together with the key
 * record in one BatchGetItem: one round trip for a cache miss. A function writes it when its limiter refuses a key
 * as banned or out of its day (the request got that far, so the gateway did not know); the authorizer then denies a
 * banned key and counts a spent one against the spent-keys usage plan. Keyed by hash, not key id, because the hash
 * is all the authorizer has before it reads: a rotated secret starts with no standing, and its first refused
 * request writes it again.
 */
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyRecord, Standing } from '../domain/keys.ts';
import { UnavailableError } from '../domain/errors.ts';
import { guarded, type Storage } from './client.ts';
import { KEEP_SECONDS } from './limiter-items.ts';

export const standingKey = (hash: string) => ({ pk: `ks#${hash}` });

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
      const item = out.Responses?.[tables.state]?.[0] as { banUntil?: number; spentDay?: number } | undefined;
      standing = {
        ...(item?.banUntil !== undefined ? { bannedUntil: item.banUntil } : {}),
        ...(item?.spentDay !== undefined ? { spentDay: item.spentDay } : {}),
      };
    }
    request = (out.UnprocessedKeys ?? {}) as typeof request;
  }
  if (!keyRead) throw new UnavailableError('KeyLookupUnprocessed');
  return { ...(record ? { record } : {}), ...(standing ? { standing } : {}) };
}

/** What a function tells the gateway about a key it refused. */
export type StandingNote = { readonly bannedUntil: number } | { readonly spentDay: number };

/**
 * Records a refusal's standing for the gateway. Idempotent (a resend sets the same values; a ban is never shortened),
 * so the SDK may resend it.
 */
export async function noteStanding({ doc, tables }: Storage, hash: string, note: StandingNote): Promise<void> {
  const until = 'bannedUntil' in note ? note.bannedUntil : note.spentDay + 86_400;
  await guarded((options) =>
    doc.send(
      new UpdateCommand({
        TableName: tables.state,
        Key: standingKey(hash),
        ...('bannedUntil' in note
          ? {
              UpdateExpression: 'SET banUntil = :v, expiresAt = :exp',
              ConditionExpression: 'attribute_not_exists(banUntil) OR banUntil < :v',
            }
          : { UpdateExpression: 'SET spentDay = :v, expiresAt = :exp' }),
        ExpressionAttributeValues: {
          ':v': 'bannedUntil' in note ? note.bannedUntil : note.spentDay,
          ':exp': until + KEEP_SECONDS,
        },
      }),
      options,
    ),
  ).catch((err: unknown) => {
    // A ban already written until as late or later: nothing to add.
    if ((err as Error)?.name === 'ConditionalCheckFailedException') return;
    throw err;
  });
}
