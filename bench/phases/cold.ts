/** Phase 2: cold start, each lambda bundle in a fresh node process paired with the floor bundle (A/B rounds). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { LAMBDA_FUNCTIONS } from '../../lib/config/lambda-entries.ts';
import { ROOT } from '../lib/bundle.ts';
import { bundleOf } from '../lib/bench-ops.ts';
import { limiterShards } from '../../contract/plans.ts';
import { BENCH_AUTH, EXPECTED_STATUS, eventFor } from '../lib/events.ts';
import { seedBenchKey, seedItems, seededId } from '../lib/seed.ts';
import { coldProfile } from '../lib/cold-profile.ts';
import { floorCounts, functionEnv } from '../lib/function-env.ts';
import { median, printTable, round, runChild, spreadOf } from '../lib/util.ts';
import type { BenchContext } from './context.ts';
import type { Bundles } from './bundles.ts';

/**
 * Init plus first invoke, as a ratio to the floor's (every Lambda, the authorizer included): the floor carries the
 * same libraries and makes the same DynamoDB requests (bench/floor-handler.ts), so the ratio is the price of our code.
 */
const COLD_GOAL = 1.15;

export async function runCold(
  { argv, P, endpoint, seedClient, result, target, answers, log }: BenchContext,
  { bundles, floorBundle }: Bundles,
): Promise<void> {
  const prefix = 'bench-cold';
  const tableEnv = await provisionLocalTables(endpoint, prefix);
  await seedItems(seedClient, tableEnv, 0, 100);
  // A key of the form issued now, for the bench key's id: the bench key's old form costs the authorizer an
  // `OldKeyFormAccepted` metric line on its first invoke that an issued key does not, and that its floor does not write.
  const token = generateKey();
  await seedBenchKey(seedClient, tableEnv.KEYS_TABLE_NAME!, token);
  const env = functionEnv(tableEnv, endpoint, argv);
  const evDir = mkdtempSync(join(tmpdir(), 'bench-events-'));
  const evFile = (name: string) => {
    const f = join(evDir, `${name}.json`);
    writeFileSync(f, JSON.stringify(eventFor(name, { existingId: seededId(7), bearer: token })));
    return f;
  };
  /** The floor of a function makes that function's requests (bench/floor-handler.ts): its operationId. */
  const floorOf = (name: string) => LAMBDA_FUNCTIONS.find((fn) => bundleOf(fn.name) === name)!.name;
  /** The floor's environment for a function: its requests (FLOOR_OF, FLOOR_SHARDS) and its metric lines. */
  const floorEnvOf = (name: string) => ({
    ...env,
    FLOOR_OF: floorOf(name),
    FLOOR_SHARDS: String(limiterShards(BENCH_AUTH)),
    FLOOR_COUNTS: floorCounts(floorOf(name), EXPECTED_STATUS[name] ?? 'allow'),
  });
  const probe = join(ROOT, 'bench/cold-start.ts');
  type Sample = {
    initMs: number;
    invokeMs: number;
    /** The process's CPU time importing the bundle, and serving the first invoke (bench/cold-start.ts). */
    initCpuMs: number;
    invokeCpuMs: number;
    totalCpuMs: number;
    totalMs: number;
    processMs: number;
    status: number | string;
    wallMs: number;
    requests: number;
    inSequence: number;
    toFirstRequestMs: number | null;
  };
  const samples = new Map<string, { l: Sample[]; f: Sample[] }>();
  log(`cold start: ${P.coldRounds} rounds x ${bundles.length} lambdas, each paired with the floor (alternating order)`);
  // One throwaway run warms the OS file cache for node and the bundles.
  await runChild([probe, floorBundle.outfile, evFile(bundles[0]!.name)], floorEnvOf(bundles[0]!.name));
  for (let round_ = 0; round_ < P.coldRounds; round_++) {
    for (const b of bundles) {
      const ev = evFile(b.name);
      const s = samples.get(b.name) ?? { l: [], f: [] };
      samples.set(b.name, s);
      const runL = async () => s.l.push(await runChild<Sample>([probe, b.outfile, ev], env));
      const floorEnv = floorEnvOf(b.name);
      const runF = async () => s.f.push(await runChild<Sample>([probe, floorBundle.outfile, ev], floorEnv));
      if (round_ % 2) await runF().then(runL);
      else await runL().then(runF);
    }
  }
  // `--cold-prof=list-pets,create-pet`: those functions' bundles.
  const named = argv
    .find((a) => a.startsWith('--cold-prof='))
    ?.slice('--cold-prof='.length)
    .split(',');
  if (argv.includes('--cold-prof') || named) {
    // Where the cold CPU goes, for the named functions or the two furthest from their floors in this run (CPU time,
    // the steadier measure), against the floor's.
    const gap = (name: string) => {
      const { l, f } = samples.get(name)!;
      return median(l.map((x, i) => x.totalCpuMs / f[i]!.totalCpuMs));
    };
    const names = bundles.map((b) => b.name);
    const unknown = named?.filter((n) => !names.includes(n)) ?? [];
    if (unknown.length)
      throw new Error(`--cold-prof: no function ${unknown.join(', ')} (functions: ${names.join(', ')})`);
    const chosen = named ?? names.sort((a, b) => gap(b) - gap(a)).slice(0, 2);
    const profiled: Record<string, unknown> = {};
    for (const b of bundles.filter((x) => chosen.includes(x.name))) {
      const floorEnv = floorEnvOf(b.name);
      const { ours, floor } = await coldProfile(
        probe,
        evFile(b.name),
        { ours: { bundle: b.outfile, env }, floor: { bundle: floorBundle.outfile, env: floorEnv } },
        P.coldRounds,
      );
      const rows = [...new Set([...ours.keys(), ...floor.keys()])]
        .map((k) => ({ pkg: k, ours: round(ours.get(k) ?? 0), floor: round(floor.get(k) ?? 0) }))
        .map((r) => ({ ...r, difference: round(r.ours - r.floor) }))
        .sort((a, b) => b.difference - a.difference);
      profiled[b.name] = rows;
      const total = (m: Map<string, number>) => round([...m.values()].reduce((a, v) => a + v, 0));
      printTable(
        `2c. Where ${b.name}'s cold CPU goes (--cold-prof, self ms per cold start, init + first invoke, mean of ${P.coldRounds}; source-mapped): ${total(ours)} ms, floor ${total(floor)} ms`,
        ['package or folder', 'ms', 'floor ms', 'difference'],
        rows.filter((r) => Math.abs(r.difference) >= 0.3).map((r) => [r.pkg, r.ours, r.floor, r.difference]),
      );
    }
    result.coldProfile = profiled;
  }
  rmSync(evDir, { recursive: true, force: true });
  const countOf = (xs: readonly Sample[]) => {
    const n: Record<string, number> = {};
    for (const x of xs) n[String(x.status)] = (n[String(x.status)] ?? 0) + 1;
    return n;
  };
  for (const [name, { l, f }] of samples) {
    answers(`cold ${name}`, EXPECTED_STATUS[name] ?? 'allow', countOf(l));
    answers(`cold ${name} (floor)`, EXPECTED_STATUS[name] ?? 'allow', countOf(f));
  }
  const rows = [...samples].map(([name, { l, f }]) => {
    /** The median of the per-round ratios of one measure, ours over the floor's, and its spread against the goal. */
    const paired = (of: (x: Sample) => number) => {
      const ratios = l.map((x, i) => of(x) / of(f[i]!));
      return { ratio: round(median(ratios), 3), spread: spreadOf(ratios, (v) => v <= COLD_GOAL) };
    };
    // The floor answers as the function does.
    const bad = [...l, ...f].map((x) => x.status).filter((st) => st !== (EXPECTED_STATUS[name] ?? 'allow'));
    return {
      lambda: name,
      rounds: l.length,
      initMs: round(median(l.map((x) => x.initMs))),
      invokeMs: round(median(l.map((x) => x.invokeMs))),
      totalMs: round(median(l.map((x) => x.totalMs))),
      floorTotalMs: round(median(f.map((x) => x.totalMs))),
      ...paired((x) => x.totalMs),
      // The same ratio in CPU time, which the machine's other load disturbs far less than wall time (DynamoDB Local's
      // own time is not in it): where the wall ratio is inside its spread, this one says which side of the goal
      // the code is on. Init and first invoke apart, both sides, to say where the difference is.
      cpu: {
        initMs: round(median(l.map((x) => x.initCpuMs))),
        invokeMs: round(median(l.map((x) => x.invokeCpuMs))),
        floorInitMs: round(median(f.map((x) => x.initCpuMs))),
        floorInvokeMs: round(median(f.map((x) => x.invokeCpuMs))),
        ...paired((x) => x.totalCpuMs),
      },
      processMs: round(median(l.map((x) => x.processMs))),
      floorProcessMs: round(median(f.map((x) => x.processMs))),
      // What the first invoke waited for: DynamoDB requests (the median sample's), how many of them one after
      // another, and the CPU time before the first of them left.
      requests: median(l.map((x) => x.requests)),
      // The floor's, for the same function: the same requests, or the comparison is off.
      floorRequests: median(f.map((x) => x.requests)),
      inSequence: median(l.map((x) => x.inSequence)),
      toFirstRequestMs: round(median(l.map((x) => x.toFirstRequestMs ?? NaN).filter(Number.isFinite))),
      unexpectedStatus: bad.length ? [...new Set(bad.map(String))] : [],
    };
  });
  const floorInit = median([...samples.values()].flatMap((s) => s.f.map((x) => x.initMs)));
  const floorInvoke = median([...samples.values()].flatMap((s) => s.f.map((x) => x.invokeMs)));
  const floorSamples = [...samples.values()].flatMap((s) => s.f);
  const floorToFirst = round(median(floorSamples.map((x) => x.toFirstRequestMs ?? NaN).filter(Number.isFinite)));
  result.coldStart = {
    floor: { initMs: round(floorInit), invokeMs: round(floorInvoke), toFirstRequestMs: floorToFirst },
    lambdas: rows,
  };
  printTable(
    `2. Cold start: fresh node, import bundle + first invoke vs DynamoDB Local (x floor: the same libraries making the function's requests; median of ${P.coldRounds} A/B rounds' ratios, spread p25-p75)`,
    [
      'lambda',
      'init ms',
      'invoke ms',
      'total ms',
      'floor ms',
      'x floor',
      'spread',
      'process ms',
      'floor proc',
      'ddb req',
      'floor req',
      'in sequence',
      'to 1st req ms',
    ],
    [
      [
        'floor',
        floorInit,
        floorInvoke,
        floorInit + floorInvoke,
        '',
        1,
        '',
        '',
        '',
        '',
        median(floorSamples.map((x) => x.requests)),
        median(floorSamples.map((x) => x.inSequence)),
        floorToFirst,
      ],
      ...rows.map((r) => [
        r.lambda + (r.unexpectedStatus.length ? ` (!${r.unexpectedStatus.join(',')})` : ''),
        r.initMs,
        r.invokeMs,
        r.totalMs,
        r.floorTotalMs,
        r.ratio,
        `${r.spread.lo.toFixed(2)}-${r.spread.hi.toFixed(2)}`,
        r.processMs,
        r.floorProcessMs,
        r.requests,
        r.floorRequests,
        r.inSequence,
        r.toFirstRequestMs,
      ]),
    ],
  );
  printTable(
    `2a. Cold start in CPU time (the same samples: the process's CPU ms importing the bundle and serving the first invoke; x floor: median of the per-round ratios, spread p25-p75)`,
    ['lambda', 'init cpu', 'floor', 'invoke cpu', 'floor', 'cpu x floor', 'spread'],
    rows.map((r) => [
      r.lambda,
      r.cpu.initMs,
      r.cpu.floorInitMs,
      r.cpu.invokeMs,
      r.cpu.floorInvokeMs,
      r.cpu.ratio,
      `${r.cpu.spread.lo.toFixed(2)}-${r.cpu.spread.hi.toFixed(2)}`,
    ]),
  );
  for (const r of rows)
    target(`cold start <= ${COLD_GOAL}x floor`, r.lambda, r.ratio, `<= ${COLD_GOAL}`, r.spread.verdict);
  for (const r of rows)
    target(`cold start cpu <= ${COLD_GOAL}x floor`, r.lambda, r.cpu.ratio, `<= ${COLD_GOAL}`, r.cpu.spread.verdict);
}
