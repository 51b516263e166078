/**
 * Seeds a keys table with `n` key records as the key store writes them (listing attributes included:
 * lambdas/storage/key-listing.ts), by BatchWrite, and measures what `keys list` reads from it. Shared
 * by the bench's listing phase (100,000 keys) and test/integration/admin-listing.test.ts (a small table).
 *
 * Mix: plans in rotation free 70 %, pro 20 %, business 9 %, enterprise 1 %; 1 % revoked; owners `owner-<i mod 5,000>` (so an owner has about 20 keys), one in ten in upper case.
 */
import { createHash } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PlanName } from '../../contract/plans.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { listKeys, listing, type ListFilter } from '../../lambdas/storage/key-listing.ts';
import { rangeWriter } from './batch-write.ts';

const T0 = Date.UTC(2030, 0, 1);

export function seededKey(i: number): KeyRecord {
  const r = i % 100;
  const plan: PlanName = r < 70 ? 'free' : r < 90 ? 'pro' : r < 99 ? 'business' : 'enterprise';
  const revoked = i % 97 === 0;
  const owner = `owner-${i % 5_000}`;
  return {
    hash: createHash('sha256').update(`seeded-${i}`).digest('hex'),
    keyId: `key_seed${String(i).padStart(10, '0')}`,
    owner: i % 10 === 0 ? owner.toUpperCase() : owner,
    plan,
    ...(plan === 'enterprise' ? { limits: { perMinute: 6_000, perDay: 1_000_000 } } : {}),
    status: revoked ? 'revoked' : 'active',
    createdAt: new Date(T0 + i * 1000).toISOString(),
    ...(revoked ? { revokedAt: new Date(T0 + i * 1000 + 500).toISOString() } : {}),
    version: 1,
  };
}

/** Writes keys [from, to), 25 per BatchWrite, `parallel` in flight; returns the milliseconds it took. */
export const seedKeyTable = rangeWriter((i) => {
  const record = seededKey(i);
  return marshall({ ...record, ...listing(record) }, { removeUndefinedValues: true });
});

export interface ListingMeasure {
  readonly query: string;
  readonly returned: number;
  /** Items DynamoDB read (ScannedCount summed over the page's queries). */
  readonly read: number;
  readonly readPerListed: number;
}

/** What one page of `keys list` reads for each filter. */
export async function measureListing(storage: Storage): Promise<ListingMeasure[]> {
  const rows: ListingMeasure[] = [];
  const measure = async (query: string, filter: ListFilter, limit: number) => {
    const page = await listKeys(storage, filter, limit);
    rows.push({
      query,
      returned: page.records.length,
      read: page.read,
      readPerListed: page.records.length ? page.read / page.records.length : 0,
    });
  };
  await measure('100 keys of a plan (business)', { plan: 'business' }, 100);
  await measure('100 keys of a plan (free)', { plan: 'free' }, 100);
  await measure('an owner (any case)', { owner: 'OWNER-42' }, 100);
  await measure('100 revoked keys', { status: 'revoked' }, 100);
  return rows;
}
