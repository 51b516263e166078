/**
 * Before and after of our own code, bundle against bundle, without the floor in between: what a change to the
 * functions buys, measured on the same machine in the same minutes.
 *   node bench/compare-bundles.ts [--rounds=14] [--fns=list-pets,create-pet] [--warm=1] <before dir> <after dir>
 * Each directory holds bundles as `npm run bench -- --only bundles` writes them (bench/results/bundles: copy it aside
 * before the change). Cold: a fresh process per sample (bench/cold-start.ts), the two sides alternating, each round's
 * after/before ratio of CPU time (init and first invoke) and of wall time. Warm (`--warm=S`): each side's bundle in a
 * driver process (bench/handler-driver.ts), one call in flight, S seconds per round, the ratio of CPU per call. All
 * against a DynamoDB Local of its own, with the bench key (Enterprise, leased) and 100 pets. Prints medians, p25-p75.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startDynamoLocal } from '../lib/local/dynamodb.ts';
import { localClient, provisionLocalTables } from '../lambdas/storage/provision.ts';
import { cellOf, type Cell, type Slice } from './lib/cell.ts';
import { LAMBDA_FUNCTIONS } from '../lib/config/lambda-entries.ts';
import { ROOT } from './lib/bundle.ts';
import { bundleOf } from './lib/bench-ops.ts';
import { BENCH_AUTH, EXPECTED_STATUS, eventFor } from './lib/events.ts';
import { functionEnv } from './lib/function-env.ts';
import { seedBenchKey, seedItems, seededId } from './lib/seed.ts';
import { median, quantile, runChild } from './lib/util.ts';
import { BENCH_KEY } from './phases/context.ts';

const argv = process.argv.slice(2);
const opt = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const [before, after] = argv.filter((a) => !a.startsWith('--')).map((d) => resolve(d));
if (!before || !after)
  throw new Error('usage: node bench/compare-bundles.ts [--rounds=N] [--fns=a,b] [--warm=S] <before> <after>');
const ROUNDS = Number(opt('rounds') ?? 14);
/** By default every function the stack deploys, by bundle name. */
const FNS = opt('fns')?.split(',') ?? LAMBDA_FUNCTIONS.map((fn) => bundleOf(fn.name));
const WARM = Number(opt('warm') ?? 0);
const SIDES = { before, after } as const;
type Side = keyof typeof SIDES;

const fmt = (xs: number[], d = 1) =>
  `${median(xs).toFixed(d)} (${quantile(xs, 0.25).toFixed(d)}-${quantile(xs, 0.75).toFixed(d)})`;

const dynamo = await startDynamoLocal();
const seed = localClient(dynamo.endpoint);
try {
  const tables = await provisionLocalTables(dynamo.endpoint, 'bench-compare');
  await seedItems(seed, tables, 0, 100);
  await seedBenchKey(seed, tables.KEYS_TABLE_NAME!, BENCH_KEY);
  const env = functionEnv(tables, dynamo.endpoint, argv);
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  for (const fn of FNS) {
    const event = eventFor(fn, { existingId: seededId(7), bearer: BENCH_KEY }) as {
      requestContext?: { authorizer?: Record<string, unknown> };
    };
    const evFile = join(dir, `${fn}.json`);
    writeFileSync(evFile, JSON.stringify(event));
    type Sample = { initCpuMs: number; invokeCpuMs: number; totalCpuMs: number; totalMs: number; status: unknown };
    const cold: Record<Side, Sample[]> = { before: [], after: [] };
    for (let r = 0; r < ROUNDS; r++)
      for (const s of (r % 2 ? ['after', 'before'] : ['before', 'after']) as Side[])
        cold[s].push(
          await runChild<Sample>([join(ROOT, 'bench/cold-start.ts'), join(SIDES[s], `${fn}.mjs`), evFile], env),
        );
    const ratio = (of: (x: Sample) => number) => cold.after.map((x, i) => of(x) / of(cold.before[i]!));
    console.log(`\n${fn} (cold, ${ROUNDS} rounds): median (p25-p75)`);
    for (const s of ['before', 'after'] as Side[])
      console.log(
        `  ${s.padEnd(6)}  init cpu ${fmt(cold[s].map((x) => x.initCpuMs))}  invoke cpu ${fmt(cold[s].map((x) => x.invokeCpuMs))}  wall ${fmt(cold[s].map((x) => x.totalMs))}  status ${[...new Set(cold[s].map((x) => x.status))].join(',')}`,
      );
    console.log(
      `  after/before: cpu x ${fmt(
        ratio((x) => x.totalCpuMs),
        3,
      )}, wall x ${fmt(
        ratio((x) => x.totalMs),
        3,
      )}`,
    );
    if (!WARM) continue;
    // Operations get the bench key's authorizer context, as API Gateway passes it.
    if (event.requestContext)
      event.requestContext.authorizer = { ...BENCH_AUTH, principalId: BENCH_AUTH.keyId, integrationLatency: 0 };
    const expect = EXPECTED_STATUS[fn] ?? 'allow';
    const drivers = Object.fromEntries(
      await Promise.all(
        (['before', 'after'] as Side[]).map(async (s) => {
          const child = fork(join(ROOT, 'bench/handler-driver.ts'), [join(SIDES[s], `${fn}.mjs`)], {
            env,
            stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
          });
          await new Promise((r) => child.once('message', r));
          const run = (seconds: number) =>
            new Promise<Cell>((r) => {
              child.once('message', (m) => r(cellOf([m as Slice])));
              child.send({ events: [event], connections: 1, seconds, expect });
            });
          await run(Math.min(1, WARM));
          return [s, { child, run }] as const;
        }),
      ),
    ) as Record<Side, { child: ReturnType<typeof fork>; run: (s: number) => Promise<Cell> }>;
    const warm: Record<Side, Cell[]> = { before: [], after: [] };
    for (let r = 0; r < ROUNDS; r++)
      for (const s of (r % 2 ? ['after', 'before'] : ['before', 'after']) as Side[])
        warm[s].push(await drivers[s].run(WARM));
    for (const d of Object.values(drivers)) d.child.disconnect();
    console.log(`${fn} (warm, one in flight, ${ROUNDS} rounds x ${WARM} s):`);
    for (const s of ['before', 'after'] as Side[])
      console.log(
        `  ${s.padEnd(6)}  cpu ms/call ${fmt(
          warm[s].map((x) => x.cpuMsPerCall),
          3,
        )}  unexpected ${warm[s].reduce((a, x) => a + x.unexpected, 0)}`,
      );
    console.log(
      `  after/before: cpu x ${fmt(
        warm.after.map((x, i) => x.cpuMsPerCall / warm.before[i]!.cpuMsPerCall),
        3,
      )}`,
    );
  }
} finally {
  seed.destroy();
  await dynamo.stop();
}
process.exit(0);
