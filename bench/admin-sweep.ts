/**
 * How long the admin tool's sweeps take on moto at scale, and its slowest single DynamoDB request: what the admin's
 * DynamoDB defaults (lib/admin/targets.ts ADMIN_DYNAMODB, `--timeout`, `--attempts`) must outwait.
 *   node bench/admin-sweep.ts [keys=100000]
 * Starts its own moto_server, fills a keys table with BatchWrite (records as the key store writes them, with the
 * listing index's attributes), then runs through the CLI, `--local` pointed at moto, with a timeout long enough to
 * never cut a request: `keys list --limit 1000` page after page to the end, and `keys reindex` (a paged Scan of the
 * whole table). Prints one JSON line per sweep: its time, its requests and its slowest request.
 */
import { createHash } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { PLAN_NAMES } from '../contract/plans.ts';
import type { KeyRecord } from '../lambdas/domain/keys.ts';
import { listing } from '../lambdas/storage/key-listing.ts';
import { localClient, provisionLocalTables } from '../lambdas/storage/provision.ts';
import { realDeps, runAdmin, type DepsFactory } from '../lib/admin/cli.ts';
import { startMoto } from '../test/helpers/moto.ts';
import { rangeWriter } from './lib/batch-write.ts';

const n = Number(process.argv[2] ?? 100_000);
const moto = await startMoto();
try {
  const prefix = `sweep-${Date.now().toString(36)}`;
  const env = await provisionLocalTables(moto.endpoint, prefix);
  const created = Date.UTC(2036, 0, 1);
  const record = (i: number): KeyRecord => ({
    hash: createHash('sha256').update(`sweep-${i}`).digest('hex'),
    keyId: `key_sweep${String(i).padStart(8, '0')}`,
    owner: `customer-${i % 5_000}`,
    plan: PLAN_NAMES[i % PLAN_NAMES.length]!,
    ...(PLAN_NAMES[i % PLAN_NAMES.length] === 'enterprise' ? { limits: { perMinute: 6_000, perDay: 1_000_000 } } : {}),
    status: 'active',
    createdAt: new Date(created + i * 1000).toISOString(),
    version: 1,
    writeId: '00000000-0000-4000-8000-000000000000',
  });
  const client = localClient(moto.endpoint);
  const fillMs = await rangeWriter((i) => {
    const r = record(i);
    return marshall({ ...r, ...listing(r) }, { removeUndefinedValues: true });
  })(client, env.KEYS_TABLE_NAME!, 0, n, 8);
  client.destroy();
  console.log(JSON.stringify({ keys: n, fillSeconds: Math.round(fillMs / 100) / 10 }));

  process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT = moto.endpoint;
  process.env.ANIMAL_STORE_TABLE_PREFIX = prefix;
  let requests: number[] = [];
  // Every DynamoDB request the command makes, timed from the client's side (retries included, as one).
  const timed: DepsFactory = async (target) => {
    const deps = await realDeps(target);
    deps.storage!.ddb.middlewareStack.add(
      ((next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
        const t0 = performance.now();
        try {
          return await next(args);
        } finally {
          requests.push(performance.now() - t0);
        }
      }) as never,
      { step: 'initialize', name: 'sweepTimer' } as never,
    );
    return deps;
  };
  const cli = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(
      [...args, '--local', '--json', '--timeout', '900', '--attempts', '1'],
      { out: (l) => out.push(l), err: (l) => err.push(l) },
      timed,
    );
    if (code !== 0) throw new Error(`${args.join(' ')}: ${err.join('\n')}`);
    return JSON.parse(out.join('\n'));
  };
  const report = (sweep: string, t0: number, extra: object) => {
    const sorted = [...requests].sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        sweep,
        keys: n,
        seconds: Math.round((performance.now() - t0) / 100) / 10,
        requests: sorted.length,
        slowestRequestSeconds: Math.round(sorted.at(-1)! / 100) / 10,
        medianRequestSeconds: Math.round(sorted[Math.floor(sorted.length / 2)]! / 100) / 10,
        ...extra,
      }),
    );
    requests = [];
  };

  let t0 = performance.now();
  let listed = 0;
  let pages = 0;
  let after: string | undefined;
  do {
    const page = await cli(['keys', 'list', '--limit', '1000', ...(after ? ['--after', after] : [])]);
    listed += page.keys.length;
    pages++;
    after = page.next ?? undefined;
  } while (after);
  report('keys list --limit 1000, every page', t0, { listed, pages });

  t0 = performance.now();
  const { updated } = await cli(['keys', 'reindex']);
  report('keys reindex', t0, { updated });
} finally {
  await moto.stop();
}
