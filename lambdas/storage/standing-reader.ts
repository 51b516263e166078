/**
 * The authorizer's look at a key's ban: the limiter writes a ban to every shard's day item, so shard 0's item of
 * today says whether the key is banned and until when. One GetItem of one attribute, made only when API Gateway
 * has no cached answer for the token (60 s), so a banned client stops reaching the functions at the gateway.
 * Kept apart from the limiter's counters so the authorizer's bundle carries none of them.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { guarded, type Storage } from './client.ts';
import { shardKey } from './limiter-items.ts';

export interface BanReader {
  /** The end of the key's ban (unix seconds) if it is banned at `nowSec`. */
  bannedUntil(subject: string, nowSec: number): Promise<number | undefined>;
}

export function createBanReader({ doc, tables }: Storage): BanReader {
  return {
    async bannedUntil(subject, nowSec) {
      const dayStart = nowSec - (nowSec % 86_400);
      const out = await guarded((options) =>
        doc.send(
          new GetCommand({
            TableName: tables.state,
            Key: shardKey(subject, dayStart, 0),
            ProjectionExpression: 'banUntil',
          }),
          options,
        ),
      );
      const until = (out.Item as { banUntil?: number } | undefined)?.banUntil;
      return until !== undefined && until > nowSec ? until : undefined;
    },
  };
}
