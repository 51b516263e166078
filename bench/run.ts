/**
 * `npm run bench [-- --quick] [-- --only=bundles,cold,warm,handlers,cost,forged,scale,listing] [-- --cpu-prof] [-- --cold-prof[=list-pets,create-pet]] [-- --no-source-maps] [-- --no-lambda-heap] [-- --cold-rounds=N] [-- --no-prices]`:
 * bundle sizes, cold starts, the warm request path (Business and Enterprise keys) through the local gateway and of
 * each handler alone in process (`--only handlers`; its own options: bench/lib/handler-options.ts), DynamoDB cost and the limiter at scale,
 * each against its floor measured side by side in the same run. Prints tables and writes bench/results/latest.json.
 * See docs/performance.md.
 */
import { cpus, totalmem } from 'node:os';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { startDynamoLocal } from '../lib/local/dynamodb.ts';
import { localClient } from '../lambdas/storage/provision.ts';
import { ROOT } from './lib/bundle.ts';
import { printTable, round, stopChild, type Verdict } from './lib/util.ts';
import { answerBook } from './lib/answers.ts';
import { runBundles } from './phases/bundles.ts';
import { runCold } from './phases/cold.ts';
import { runLibraryPrices } from './phases/library-prices.ts';
import { runListing } from './phases/listing.ts';
import { runCost } from './phases/cost.ts';
import { runForgedTokens } from './phases/forged-tokens.ts';
import { runScale } from './phases/scale.ts';
import { runWarm } from './phases/warm.ts';
import { runHandlers } from './phases/handlers.ts';
import type { BenchContext, Params } from './phases/context.ts';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const PHASES = 'bundles,cold,warm,handlers,cost,forged,scale,listing';
// `--only=a,b` or `--only a,b`.
const onlyAt = argv.indexOf('--only');
const ONLY = new Set(
  (argv.find((a) => a.startsWith('--only='))?.slice(7) ?? (onlyAt >= 0 ? argv[onlyAt + 1] : undefined) ?? PHASES).split(
    ',',
  ),
);
const unknown = [...ONLY].filter((p) => !PHASES.split(',').includes(p));
if (unknown.length) throw new Error(`--only: no phase ${unknown.join(', ')} (phases: ${PHASES})`);
const P: Params = QUICK
  ? {
      coldRounds: 5,
      warmRounds: 1,
      warmSeconds: 1,
      warmSeed: 200,
      handlerRounds: 2,
      handlerSeconds: 0.3,
      sizes: [1_000, 3_000, 10_000],
      callsPerOp: 10,
      creates: 200,
    }
  : {
      // 20 A/B pairs (~45 s): with 10, a ratio's p25-p75 spanned up to 0.18 (getPet 1.04-1.22) around a median at
      // the goal.
      coldRounds: 20,
      warmRounds: 3,
      warmSeconds: 3,
      warmSeed: 1_000,
      // 11 rounds: the verdict is the median of the rounds' ratios. With 5 a cell's p99 median moved by up to 0.19
      // between two runs of the same code (authorizer Enterprise c=1: 0.93, then 1.12); with 7, listPets Business
      // c=1's by 0.14 in four full runs (0.99-1.13). In 14 rounds of that request its rounds' p99 ratios had a
      // standard deviation of 0.075 at one in flight and 0.061 at 16, and no less at 5 s per side (0.072, 0.108):
      // each round's new processes, not its length, set it. The median of 7 such rounds errs by ~0.035, of 11 ~0.028.
      handlerRounds: 11,
      // 3 s per side per round: at 1 s a cell at one in flight had ~400 calls a round, so its p99 was its 4th slowest
      // call, and the per-round ratios spread over ±0.2 (docs/performance.md).
      handlerSeconds: 3,
      sizes: [1_000, 10_000, 100_000],
      callsPerOp: 30,
      creates: 1_000,
    };
// `--cold-rounds=N`: more cold-start rounds than the mode's (a before/after on a noisy machine needs them).
const coldRounds = Number(argv.find((a) => a.startsWith('--cold-rounds='))?.slice(14));
if (Number.isInteger(coldRounds) && coldRounds > 0) P.coldRounds = coldRounds;
const RESULTS = join(ROOT, 'bench/results');
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
const log = (s: string) => console.error(`[bench ${elapsed()}] ${s}`);

const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?';
const result: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  mode: QUICK ? 'quick' : 'full',
  machine: {
    nproc: cpus().length,
    cpu: cpuModel,
    memGiB: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
  },
  params: P,
};
const targets: Array<{ target: string; subject: string; value: number; limit: string; met: Verdict }> = [];
/** Every cell's answers against the status its route expects (bench/lib/answers.ts). */
const book = answerBook();
const target = (t: string, subject: string, value: number, limit: string, met: boolean | Verdict) =>
  targets.push({
    target: t,
    subject,
    value: round(value, 3),
    limit,
    met: met === true ? 'yes' : met === false ? 'NO' : met,
  });

log(`mode ${result.mode}; starting DynamoDB Local`);
const dynamo = await startDynamoLocal();
const endpoint = dynamo.endpoint;
const seedClient = localClient(endpoint);
const children: ChildProcess[] = [];
const ctx: BenchContext = {
  argv,
  P,
  endpoint,
  seedClient,
  children,
  result,
  target,
  answers: book.answers,
  log,
};
try {
  const built = ONLY.has('bundles') || ONLY.has('cold') || ONLY.has('handlers') ? await runBundles(ctx) : undefined;
  if (built && ONLY.has('cold')) {
    await runCold(ctx, built);
    // `--no-prices`: the cold starts alone, for a before/after of our own code (the library prices do not change).
    if (!argv.includes('--no-prices')) await runLibraryPrices(ctx);
  }
  if (ONLY.has('warm')) await runWarm(ctx);
  // After the warm path, whose API server's CPU per call gives the local gateway's own line.
  if (built && ONLY.has('handlers')) await runHandlers(ctx, built);
  if (ONLY.has('cost')) await runCost(ctx);
  if (ONLY.has('cost') || ONLY.has('forged')) await runForgedTokens(ctx);
  if (ONLY.has('scale')) await runScale(ctx);
  if (ONLY.has('listing')) await runListing(ctx);
  const idw = (result.idAllocationWarm ?? result.idAllocationCost) as
    { writesPerCreate: number; creates: number } | undefined;
  if (idw)
    target(
      'id allocation <= 1.01 writes per create',
      `${idw.creates} creates`,
      idw.writesPerCreate,
      '<= 1.01',
      idw.writesPerCreate <= 1.01,
    );
} finally {
  for (const c of children) await stopChild(c);
  seedClient.destroy();
  await dynamo.stop();
}

result.targets = targets;
result.answers = { cellsChecked: book.checked, unexpected: book.unexpected };
result.durationSeconds = Math.round((performance.now() - started) / 1000);
printTable(
  'Targets',
  ['target', 'subject', 'value', 'goal', 'met'],
  targets.map((t) => [t.target, t.subject, t.value, t.limit, t.met]),
);
mkdirSync(RESULTS, { recursive: true });
writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(`\nwrote bench/results/latest.json (${result.mode} run, ${result.durationSeconds} s)`);
const failure = book.failure();
if (failure) {
  printTable(
    'Cells with unexpected answers (each measured other work than its floor: its ratios compare nothing)',
    ['cell', 'expected', 'answered'],
    book.unexpected.map((u) => [
      u.cell,
      u.expected,
      Object.entries(u.answers)
        .map(([s, n]) => `${s}x${n}`)
        .join(' '),
    ]),
  );
  console.error(`\n${failure}`);
  process.exit(1);
}
console.log(`every cell answered the status its route expects (${book.checked} cells checked)`);
process.exit(0);
