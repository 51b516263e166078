/**
 * `node bench/variants.ts [--rounds=N] [--fns=list-pets,create-pet,authorizer]`: measures proposed optimisations
 * without touching lambdas/ or lib/. Each variant is a patched copy of the sources in a temp dir (cumulative patches),
 * bundled with the shared esbuild config and cold-started A/B against the floor bundle, like `npm run bench`. Prints a
 * before/after table and writes bench/results/variants.json. The patches below are the exact proposed changes.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal } from '../lib/local/dynamodb.ts';
import { localClient, provisionLocalTables } from '../lambdas/storage/provision.ts';
import { LAMBDA_FUNCTIONS, writeLambdaEntry } from '../lib/config/lambda-entries.ts';
import { ROOT, bundle, type BundleResult } from './lib/bundle.ts';
import { bundleOf } from './lib/bench-ops.ts';
import { eventFor } from './lib/events.ts';
import { seedBenchKey, seedItems, seededId } from './lib/seed.ts';
import { median, printTable, ratio, round, runChild } from './lib/util.ts';

type Patch = { file: string; from?: string; to: string };

const VARIANTS: Array<{ name: string; description: string; patches: Patch[]; noSourceMaps?: boolean }> = [
  { name: 'baseline', description: 'the code as it is', patches: [] },
  {
    name: '+no --enable-source-maps at runtime',
    description:
      "api-function.ts: drop NODE_OPTIONS '--enable-source-maps' (keep uploading the .map for offline decoding)",
    patches: [],
    noSourceMaps: true,
  },
];

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 6);
/** Every function the stack deploys, by bundle name (`list-pets`), with its own name (`listPets`, its floor's). */
const LAMBDAS = new Map(LAMBDA_FUNCTIONS.map((fn) => [bundleOf(fn.name), fn]));
/**
 * The functions cold-started per variant (`--fns=a,b`); by default the two furthest from their floors in the last full
 * run, and the authorizer.
 */
const COLD = (process.argv.find((a) => a.startsWith('--fns='))?.slice(6) ?? 'list-pets,create-pet,authorizer').split(
  ',',
);
const unknownFns = COLD.filter((n) => !LAMBDAS.has(n));
if (unknownFns.length)
  throw new Error(`--fns: no function ${unknownFns.join(', ')} (functions: ${[...LAMBDAS.keys()].join(', ')})`);
const BENCH_KEY = 'ask_bench0123456789abcdefghijklmnopqrstuvwxyz01';

// A patch whose anchor text is gone would measure the wrong code: refuse before spending minutes on a run.
for (const v of VARIANTS) {
  for (const p of v.patches) {
    if (p.from !== undefined && !readFileSync(join(ROOT, p.file), 'utf8').includes(p.from)) {
      throw new Error(`variant "${v.name}": ${p.file} no longer contains ${JSON.stringify(p.from)}`);
    }
  }
}

const work = mkdtempSync(join(tmpdir(), 'bench-variants-'));
const src = join(work, 'src');
for (const d of ['contract', 'lambdas', 'lib', 'bench'])
  cpSync(join(ROOT, d), join(src, d), { recursive: true, filter: (p) => !p.includes('bench/results') });
symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'));
writeFileSync(join(src, 'package.json'), readFileSync(join(ROOT, 'package.json')));

const dynamo = await startDynamoLocal();
const client = localClient(dynamo.endpoint);
const out: Array<Record<string, unknown>> = [];
try {
  const tableEnv = await provisionLocalTables(dynamo.endpoint, 'bench-variants');
  await seedItems(client, tableEnv, 0, 100);
  await seedBenchKey(client, tableEnv.KEYS_TABLE_NAME!, BENCH_KEY);
  const floor = await bundle('floor-handler', join(src, 'bench/floor-handler.ts'), join(work, 'floor'));
  const evDir = join(work, 'events');
  mkdirSync(evDir);
  const ev = (n: string) => {
    const f = join(evDir, `${n}.json`);
    writeFileSync(f, JSON.stringify(eventFor(n, { existingId: seededId(7), bearer: BENCH_KEY })));
    return f;
  };
  for (const [i, v] of VARIANTS.entries()) {
    for (const p of v.patches) {
      const f = join(src, p.file);
      const text = readFileSync(f, 'utf8');
      if (p.from !== undefined && !text.includes(p.from))
        throw new Error(`${v.name}: ${p.file} no longer contains ${p.from}`);
      writeFileSync(f, p.from === undefined ? p.to : text.replace(p.from, p.to));
    }
    const bundles = new Map<string, BundleResult>();
    for (const [n, fn] of LAMBDAS) {
      // The entry as the stack generates it, importing the patched copy of the sources.
      bundles.set(n, await bundle(n, writeLambdaEntry(fn, join(work, 'entries'), src), join(work, `v${i}`)));
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...tableEnv,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      AWS_REGION: 'us-east-1',
      METRICS: 'off',
      LOG_LEVEL: 'WARN',
      ...(v.noSourceMaps ? {} : { NODE_OPTIONS: '--enable-source-maps' }),
    };
    const cold: Record<string, number> = {};
    for (const n of COLD) {
      const ratios: number[] = [];
      const totals: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const a = () =>
          runChild<{ totalMs: number }>([join(ROOT, 'bench/cold-start.ts'), bundles.get(n)!.outfile, ev(n)], env);
        const b = () =>
          // The floor makes this function's requests (bench/floor-handler.ts).
          runChild<{ totalMs: number }>([join(ROOT, 'bench/cold-start.ts'), floor.outfile, ev(n)], {
            ...env,
            FLOOR_OF: LAMBDAS.get(n)!.name,
          });
        const [x, y] = r % 2 ? [await a(), await b()] : await b().then(async (fy) => [await a(), fy] as const);
        ratios.push(x.totalMs / y.totalMs);
        totals.push(x.totalMs);
      }
      cold[n] = round(median(ratios), 3);
      cold[`${n} ms`] = round(median(totals), 1);
    }
    const row = {
      variant: v.name,
      description: v.description,
      bytes: Object.fromEntries(
        [...bundles].map(([n, b]) => [
          n,
          { min: b.minBytes, gzip: b.gzipBytes, ratio: round(ratio(b.minBytes, floor.minBytes), 3) },
        ]),
      ),
      coldRatio: cold,
    };
    out.push(row);
    console.error(
      `[variants] ${v.name}: ${COLD.map((n) => `${n} ${bundles.get(n)!.minBytes} B`).join(', ')}, cold ${JSON.stringify(cold)}`,
    );
  }
  printTable(
    `Proposed optimisations, cumulative (bundle min KB and x floor ${(floor.minBytes / 1024).toFixed(0)} KB; cold start x floor, median of ${ROUNDS} A/B rounds)`,
    ['variant', ...COLD.flatMap((n) => [`${n} KB`, 'x']), ...COLD.map((n) => `cold ${n}`)],
    out.map((r) => {
      const b = r.bytes as Record<string, { min: number; ratio: number }>;
      const c = r.coldRatio as Record<string, number>;
      return [String(r.variant), ...COLD.flatMap((n) => [b[n]!.min / 1024, b[n]!.ratio]), ...COLD.map((n) => c[n]!)];
    }),
  );
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench/results/variants.json'),
    `${JSON.stringify({ at: new Date().toISOString(), rounds: ROUNDS, floor: { min: floor.minBytes, gzip: floor.gzipBytes }, variants: out }, null, 2)}\n`,
  );
  console.log('wrote bench/results/variants.json');
} finally {
  client.destroy();
  await dynamo.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
