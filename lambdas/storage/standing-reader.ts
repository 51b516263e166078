/**
 * The authorizer's look at a key's standing today: the limiter writes a ban to every shard's day item, and shard 0's
 * item of today carries the ban's end and the day count (all of it for a key of one shard). One GetItem of two
 * attributes, made only when API Gateway has no cached answer for the token (60 s), so a banned or spent client
 * stops reaching the functions at the gateway. Kept apart from the limiter's counters so the authorizer's bundle
 * carries none of them.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Standing } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';
import { shardKey } from './limiter-items.ts';

export interface StandingReader {
  /** The key's ban (if it is banned at `nowSec`) and shard 0's count of the day. */
  standing(subject: string, nowSec: number): Promise<Standing>;
}

export function createStandingReader({ doc, tables }: Storage): StandingReader {
  return {
    async standing(subject, nowSec) {
      const dayStart = nowSec - (nowSec % 86_400);
      const out = await guarded((options) =>
        doc.send(
          new GetCommand({
            TableName: tables.state,
            Key: shardKey(subject, dayStart, 0),
            ProjectionExpression: 'banUntil, d',
          }),
          options,
        ),
      );
      const item = out.Item as { banUntil?: number; d?: number } | undefined;
      const until = item?.banUntil;
      return { ...(until !== undefined && until > nowSec ? { bannedUntil: until } : {}), dayCount: item?.d ?? 0 };
    },
  };
}
