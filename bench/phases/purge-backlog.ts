/**
 * Phase `backlog`: `keys list` right after a mass revocation, before anyone runs `keys purge`. A keys table of
 * 100,000 keys (the listing phase's mix; 10,000 with --quick) plus 5,000 revoked keys still holding their API
 * Gateway key (500 with --quick), on DynamoDB Local: items read (ScannedCount) against keys printed for the pages an
 * admin asks for. Target: `keys list --plan business --limit 100` reads at most 2 items per key it prints; the purge
 * backlog is read only by purge.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { createHash } from 'node:crypto';
import type { PlanName } from '../../contract/plans.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import { listKeys, listPurgeDue, listing, type ListFilter } from '../../lambdas/storage/key-listing.ts';
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { rangeWriter } from '../lib/batch-write.ts';
import { seedKeyTable } from '../lib/seed-keys.ts';
import { printTable, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

const T0 = Date.UTC(2030, 6, 1);
const BACKLOG_PLANS: readonly PlanName[] = ['business', 'pro', 'enterprise', 'business', 'pro'];

/** A key revoked in the mass revocation whose API Gateway key purge has not deleted yet (two in five Business). */
export function backlogKey(i: number): KeyRecord {
  const plan = BACKLOG_PLANS[i % BACKLOG_PLANS.length]!;
  return {
    hash: createHash('sha256').update(`backlog-${i}`).digest('hex'),
    keyId: `key_back${String(i).padStart(10, '0')}`,
    owner: `leaver-${i % 70}`,
    plan,
    ...(plan === 'enterprise' ? { limits: { perMinute: 6_000, perDay: 1_000_000 } } : {}),
    status: 'revoked',
    createdAt: new Date(T0 + i * 1000).toISOString(),
    revokedAt: new Date(T0 + 10 * 86_400_000 + i).toISOString(),
    apiGatewayKeyId: `apikeyback${i}`,
    version: 2,
  };
}

/** Writes backlog keys [from, to) as the key store writes them (listing attributes included). */
export const seedBacklog = rangeWriter((i) => {
  const record = backlogKey(i);
  return marshall({ ...record, ...listing(record) }, { removeUndefinedValues: true });
});

export interface BacklogRow {
  readonly query: string;
  readonly printed: number;
  readonly read: number;
}

/** What the pages an admin asks for read, with the backlog in the table, and what purge reads. */
export async function measureBacklog(storage: Storage): Promise<BacklogRow[]> {
  const rows: BacklogRow[] = [];
  const page = async (query: string, filter: ListFilter, limit: number) => {
    const out = await listKeys(storage, filter, limit);
    rows.push({ query, printed: out.records.length, read: out.read });
  };
  await page('keys list --plan business --limit 100', { plan: 'business' }, 100);
  await page('keys list --limit 5', {}, 5);
  await page('keys list --status revoked --limit 100', { status: 'revoked' }, 100);
  await page('keys list --owner leaver-7', { owner: 'leaver-7' }, 100);
  const due = await listPurgeDue(storage, T0 + 365 * 86_400_000);
  rows.push({ query: 'keys purge: keys it has work for', printed: due.length, read: due.length });
  return rows;
}

export async function runPurgeBacklog({ endpoint, seedClient, result, target, log, argv }: BenchContext) {
  const quick = argv.includes('--quick');
  const [n, backlog] = quick ? [10_000, 500] : [100_000, 5_000];
  const tableEnv = await provisionLocalTables(endpoint, 'bench-backlog');
  const keys = tableEnv.KEYS_TABLE_NAME!;
  const ms = (await seedKeyTable(seedClient, keys, 0, n)) + (await seedBacklog(seedClient, keys, 0, backlog));
  log(`backlog: seeded ${n} keys and ${backlog} revoked keys awaiting purge in ${(ms / 1000).toFixed(1)} s`);
  const storage = localStorage(endpoint, tableEnv);
  try {
    const rows = await measureBacklog(storage);
    printTable(
      `keys list with ${backlog.toLocaleString('en-US')} revoked keys awaiting purge, on ${n.toLocaleString('en-US')} keys`,
      ['query', 'printed', 'items read', 'read per printed key'],
      rows.map((r) => [r.query, r.printed, r.read, round(r.printed ? r.read / r.printed : 0, 2)]),
    );
    result.purgeBacklog = { keys: n, backlog, rows };
    const business = rows[0]!;
    const ratio = business.read / Math.max(1, business.printed);
    target(
      'list 100 Business keys beside a purge backlog: items read per key printed',
      `${n} keys, ${backlog} awaiting purge`,
      ratio,
      '<= 2',
      business.printed === 100 && ratio <= 2,
    );
    const five = rows[1]!;
    target('keys list --limit 5 prints 5', `${backlog} awaiting purge`, five.printed, '= 5', five.printed === 5);
  } finally {
    storage.ddb.destroy();
  }
}
