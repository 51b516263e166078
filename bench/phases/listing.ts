/**
 * Phase: the admin tool's `keys list` on a seeded keys table (100,000 keys; 10,000 with --quick),
 * on DynamoDB Local: items read per key listed (ScannedCount), against a Scan of the whole table (what listing did
 * before the listing index). Target: a page of 100 keys of one plan reads at most 2 items per key it returns.
 */
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { measureListing, seedKeyTable } from '../lib/seed-keys.ts';
import { printTable, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

export async function runListing({ endpoint, seedClient, result, target, log, argv }: BenchContext): Promise<void> {
  const n = argv.includes('--quick') ? 10_000 : 100_000;
  const tableEnv = await provisionLocalTables(endpoint, 'bench-listing');
  const ms = await seedKeyTable(seedClient, tableEnv.KEYS_TABLE_NAME!, 0, n);
  log(`listing: seeded ${n} keys in ${(ms / 1000).toFixed(1)} s`);
  const storage = localStorage(endpoint, tableEnv);
  try {
    const rows = await measureListing(storage);
    printTable(
      `keys list on ${n.toLocaleString('en-US')} keys (a full Scan reads ${n.toLocaleString('en-US')})`,
      ['query', 'returned', 'items read', 'read per listed key'],
      rows.map((r) => [r.query, r.returned, r.read, round(r.readPerListed, 2)]),
    );
    result.listing = { keys: n, rows };
    const plan = rows[0]!;
    target(
      'list 100 keys of a plan: items read per key',
      `${n} keys`,
      plan.readPerListed,
      '<= 2',
      plan.readPerListed <= 2,
    );
  } finally {
    storage.ddb.destroy();
  }
}
