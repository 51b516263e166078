/** Seeds tables directly (its own client, so the request meter never sees it): pets by BatchWrite, the bench key. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { PET_STATUSES } from '../../contract/schemas.ts';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import { rangeWriter } from './batch-write.ts';
import { BENCH_AUTH } from './events.ts';

/** Seeded pets get ids from here up, far above the id allocator's blocks, so creates never collide with them. */
export const SEED_ID_BASE = 1_000_000_000;
export const seededId = (i: number) => SEED_ID_BASE + i;

/** Writes pets [from, to) (ids SEED_ID_BASE + i, statuses in rotation), 25 per BatchWrite, `parallel` in flight. */
export const seedPets = rangeWriter((i) => ({
  id: { N: String(seededId(i)) },
  name: { S: `Pet ${i}` },
  categoryId: { N: String(1 + (i % 7)) },
  status: { S: PET_STATUSES[i % PET_STATUSES.length]! },
}));

/** An Enterprise key at the ceiling (MAX_CUSTOM_LIMITS), which no benchmark reaches: the limiter never rejects. */
export async function seedBenchKey(client: DynamoDBClient, keysTable: string, key: string): Promise<void> {
  await seedKey(client, keysTable, key, {
    keyId: BENCH_AUTH.keyId,
    plan: BENCH_AUTH.plan,
    limits: { perMinute: BENCH_AUTH.perMinute, perDay: BENCH_AUTH.perDay },
  });
}

/** An active key record; `limits` only for Enterprise (a standard plan's come from contract/plans.ts). */
export async function seedKey(
  client: DynamoDBClient,
  keysTable: string,
  key: string,
  record: { keyId: string; plan: PlanName; limits?: PlanLimits },
): Promise<void> {
  await DynamoDBDocumentClient.from(client).send(
    new PutCommand({
      TableName: keysTable,
      Item: {
        hash: hashKey(key),
        keyId: record.keyId,
        owner: 'bench',
        plan: record.plan,
        ...(record.limits ? { limits: record.limits } : {}),
        status: 'active',
        createdAt: new Date().toISOString(),
      },
    }),
  );
}
