/**
 * Phase 3b: the deployed code alone, warm. Each function's bundle (the authorizer's included) is invoked in process
 * with API Gateway REST events (bench/handler-driver.ts), against the warm floor (bench/floor-warm-handler.ts: the
 * same libraries, middy, the body parser where used, Powertools Logger + Metrics, zod/mini, making the same
 * DynamoDB requests), each side in a process of its own, back to back with their order swapped every cell. No
 * gateway, no HTTP server: the ratios are the price of our code in what a customer runs in AWS. Per operation and
 * key kind (Business: the exact count; Enterprise: leases), at 1 and 16 invocations in flight: CPU time per call,
 * throughput and p99, each the median of the per-round ratios with its spread. The local gateway's own CPU per
 * request, which only a developer's machine runs, is its own table: the warm path's API server (phase 3) less the
 * in-process handler doing the same call.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { PLANS } from '../../contract/plans.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { ROOT, bundle, type BundleResult } from '../lib/bundle.ts';
import { AUTHORIZER_OP, ROUTE_OPS } from '../lib/bench-ops.ts';
import { BENCH_AUTH, authorizerEvent, proxyEventOf } from '../lib/events.ts';
import { floorCounts, functionEnv } from '../lib/function-env.ts';
import { seedBenchKey, seedItems, seedKey, seededId } from '../lib/seed.ts';
import { handlerOptions } from '../lib/handler-options.ts';
import { stopChild } from '../lib/util.ts';
import type { CellRequest } from '../handler-driver.ts';
import { cellOf, type Cell, type Slice } from '../lib/cell.ts';
import type { BenchContext } from './context.ts';
import { SIDES, cellId, reportGcTraces, reportHandlers, type Side } from './handlers-report.ts';

/** Business key ids taken in turn: at the fastest cell's rate none nears its 1,000/min. */
const BUSINESS_IDS = 200;
/** Business keys seeded for the authorizer (it reads the key record, so they must exist). */
const BUSINESS_TOKENS = 48;
/** Enterprise key ids taken in turn: each stays under its minute's limit at the fastest cell's rate. */
const ENTERPRISE_IDS = 8;
const CONNECTIONS = [1, 16];
/**
 * Each cell's unmeasured warm-up, in every new process (and once in a lasting one): 1.5 s. At 0.5 s a run of new
 * processes put listPets at 1.05-1.10x; at 1.5 s it was 1.03-1.11x, so the longer warm-up did not account for it.
 */
const WARM_SECONDS = 1.5;
/** Room for a cell's four slices' messages and the drivers' answers beyond its measured seconds. */
const TURN_MARGIN_MS = 1_000;
/**
 * Unmeasured calls, at the most in flight, that open every key's new minute after a turn: 0.75 s at one in flight
 * (an opening takes 2-3x a call) left some of the 200 Business ids to the measured slices, 2.002-2.101 DynamoDB
 * requests per call in the rounds after a turn against 2.000 in the others.
 */
const OPENING_SECONDS = 1;
const minuteOf = (ms: number) => Math.floor(ms / 60_000);

type Op = { op: string; fn: string; bundle: string; expect: number | 'allow'; event: (auth: Auth) => unknown };
type Auth = { keyId: string; plan: string; perMinute: number; perDay: number; token: string };

const withAuth = (ev: unknown, a: Auth) => {
  const e = ev as { requestContext: { authorizer: Record<string, unknown> } };
  const { token: _token, ...context } = a;
  e.requestContext.authorizer = { ...context, principalId: a.keyId, keyHash: 'ab'.repeat(32), integrationLatency: 0 };
  return e;
};
/** What a sample's EXISTING_ITEM names: an item seeded in every table that holds items (bench/lib/seed.ts). */
const EXISTING = seededId(42);
/** The route table's operations (each sample and its variants), then the authorizer (bench/lib/bench-ops.ts). */
const OPS: readonly Op[] = [
  ...ROUTE_OPS.map((o) => ({
    op: o.op,
    fn: o.route.operationId,
    bundle: o.bundle,
    expect: o.expect,
    event: (a: Auth) => withAuth(proxyEventOf(o, EXISTING), a),
  })),
  {
    op: AUTHORIZER_OP.op,
    fn: AUTHORIZER_OP.op,
    bundle: AUTHORIZER_OP.bundle,
    expect: AUTHORIZER_OP.expect,
    event: (a) => authorizerEvent(a.token),
  },
];

/**
 * Keys of the form issued now (their own check, lambdas/domain/keys.ts), made for each run: a token of another shape
 * is refused by the authorizer with no read, so the authorizer's cells measured a refusal against the floor's read,
 * and the bench key's old form costs an `OldKeyFormAccepted` count per call that an issued key does not.
 */
const BUSINESS_KEYS = Array.from({ length: BUSINESS_TOKENS }, () => generateKey());
const businessToken = (i: number) => BUSINESS_KEYS[i % BUSINESS_TOKENS]!;
const ENTERPRISE_TOKEN = generateKey();
const business = (i: number): Auth => ({
  keyId: `key_bench_hb_${i}`,
  plan: 'business',
  ...PLANS.business.limits!,
  token: businessToken(i % BUSINESS_TOKENS),
});
const KEYS = {
  business: Array.from({ length: BUSINESS_IDS }, (_, i) => business(i)),
  // Several ids taken in turn (one token: the authorizer reads one record): one 600,000/min key (the account's rate,
  // the largest an Enterprise key may have) was spent by listOrders at 16 in flight, ~40,000 calls/s in process.
  enterprise: Array.from({ length: ENTERPRISE_IDS }, (_, i) => ({
    ...BENCH_AUTH,
    keyId: `${BENCH_AUTH.keyId}_he_${i}`,
    token: ENTERPRISE_TOKEN,
  })),
} as const;
type KeyKind = keyof typeof KEYS;
/** One cell: an operation, a key kind and the invocations in flight. */
type CellOf = { readonly o: Op; readonly k: KeyKind; readonly c: number };

type DriverOptions = {
  /** Where a --cpu-prof profile of its whole life goes. */
  readonly profileDir?: string;
  /** A file for V8's line per collection (--trace-gc-nvp: pause, survivors, promoted bytes, helper threads' share). */
  readonly gcTrace?: string;
};

/** A driver process: one bundle, imported once, invoked warm per cell. */
async function startDriver(file: string, env: NodeJS.ProcessEnv, { profileDir, gcTrace }: DriverOptions) {
  const execArgv = [
    ...process.execArgv,
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(gcTrace ? ['--trace-gc-nvp'] : []),
  ];
  // V8 prints its collection lines to the process's stdout, which the driver's line count does not see (it counts
  // what the bundle writes through process.stdout).
  const stdout = gcTrace ? openSync(gcTrace, 'w') : 'ignore';
  const child: ChildProcess = fork(join(ROOT, 'bench/handler-driver.ts'), [file], {
    env,
    execArgv,
    stdio: ['ignore', stdout, 'pipe', 'ipc'],
  });
  if (typeof stdout === 'number') closeSync(stdout);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`driver for ${file} exited (${code}):\n${stderr}`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  await next();
  return {
    child,
    run: async (req: CellRequest): Promise<Slice> => {
      child.send(req);
      const m = (await next()) as Slice & { error?: string };
      if (m.error) throw new Error(`driver for ${file}: ${m.error}`);
      return m;
    },
  };
}

export async function runHandlers(ctx: BenchContext, { bundles }: { bundles: readonly BundleResult[] }): Promise<void> {
  const { argv, P, endpoint, seedClient, children, log } = ctx;
  const tableEnv = await provisionLocalTables(endpoint, 'bench-handlers');
  await seedItems(seedClient, tableEnv, 0, P.warmSeed);
  await seedBenchKey(seedClient, tableEnv.KEYS_TABLE_NAME!, ENTERPRISE_TOKEN);
  for (let i = 0; i < BUSINESS_TOKENS; i++)
    await seedKey(seedClient, tableEnv.KEYS_TABLE_NAME!, businessToken(i), {
      keyId: `key_bench_hb_${i}`,
      plan: 'business',
    });
  const floor = await bundle('floor-warm-handler', 'bench/floor-warm-handler.ts', join(ROOT, 'bench/results/bundles'));
  const env = functionEnv(tableEnv, endpoint, argv);
  const opt = handlerOptions(argv);
  const ops = opt.ops ? OPS.filter((o) => opt.ops!.includes(o.op)) : OPS;
  const kinds = (['business', 'enterprise'] as KeyKind[]).filter((k) => !opt.keys || opt.keys.includes(k));
  const rounds = opt.rounds ?? P.handlerRounds;
  const profileRoot = opt.profile ? join(ROOT, 'bench/results/handler-profiles') : undefined;
  const gcRoot = opt.traceGc ? join(ROOT, 'bench/results/handler-gc') : undefined;
  const cellsOf = (ops: readonly Op[]): CellOf[] =>
    ops.flatMap((o) => kinds.flatMap((k) => CONNECTIONS.map((c) => ({ o, k, c }))));
  const runs = new Map<string, Array<Record<Side, Cell>>>();
  const seconds = opt.seconds ?? P.handlerSeconds;
  if (gcRoot) mkdirSync(gcRoot, { recursive: true });
  const traces: Array<{ fn: string; side: Side; file: string }> = [];
  log(
    `handlers in process: ${rounds} rounds x ${cellsOf(ops).length} cells x 2 sides x ${seconds} s, ${opt.lasting ? 'one process per side, request and key kind' : 'each round, request and key kind in new processes'}`,
  );
  const request = ({ o, k, c }: CellOf, s: number): CellRequest => ({
    events: KEYS[k].map((a) => o.event(a)),
    connections: c,
    seconds: s,
    expect: o.expect,
  });
  // Each round starts both sides' processes anew, one pair per request (an operation's sample or variant) and key
  // kind, and warms them for a second and a half per cell. A process's collector settles into one of two states, ours
  // or the floor's alike (--handlers-trace-gc prints each process's): ~1.3 MB surviving a scavenge, ~1 MB promoted
  // every time and ~3 ms a pause, or ~0.3 MB surviving and ~1.5 ms a pause, with half the mark-compacts. Which one
  // follows the process's history, not its bundle: every process that ran one key kind from its start settled in the
  // first (createPet: 80 of 80 in five runs of 8 rounds, one of Business cells, four of Enterprise; the authorizer's
  // Enterprise cells: 40 of 40 in four runs). Only a switch from Business to Enterprise cells within one process
  // moved some to the second, at random and more often the floor's (createPet, four runs of 8 rounds: ours 8 of 32,
  // the floor's 22), so the Enterprise cells' ratios read the dice: createPet's CPU at 1.08x at 16 in flight in one
  // run, 1.17x in the next, with the same code. So did a switch between listPets' two requests (a full run with a
  // pair per kind: 4-5 of 14 processes of each side in the second state, listPets Business c=16 at 1.15x; a pair per
  // request and kind: 28 of 28 in the first, 1.07x). A request's cells in processes of their own give both sides the
  // same history. Moving the drivers to a core of their own, turning off V8's allocation-site pretenuring or page
  // promotion, and a 10 s warm-up per cell did not settle the state (the last moved processes partway). With one
  // process per side for all rounds, two runs of the same code put getPet's CPU at 1.02-1.05x, then 1.13-1.21x; new
  // processes make the rounds independent samples, as a fleet of containers is, and their median the figure.
  // `--handlers-lasting` keeps one process per side, request and key kind through all the rounds.
  for (const fn of [...new Set(ops.map((o) => o.fn))]) await measureFunction(fn);
  for (const { o, k, c } of cellsOf(ops))
    for (const side of SIDES) {
      const got: Record<string, number> = {};
      for (const pair of runs.get(cellId({ op: o.op, key: k, connections: c })) ?? [])
        for (const [status, n] of Object.entries(pair[side].answers)) got[status] = (got[status] ?? 0) + n;
      ctx.answers(`handlers ${o.op} ${k} c=${c} ${side}`, o.expect, got);
    }
  const cellKeys = cellsOf(ops).map(({ o, k, c }) => ({ op: o.op, key: k, connections: c }));
  reportHandlers(ctx, cellKeys, runs, { rounds, seconds, businessKeyIds: BUSINESS_IDS });
  if (traces.length) reportGcTraces(ctx, traces);

  async function measureFunction(fn: string) {
    const fnOps = ops.filter((o) => o.fn === fn);
    const ours = bundles.find((b) => b.name === fnOps[0]!.bundle);
    if (!ours) throw new Error(`no bundle ${fnOps[0]!.bundle}`);
    /** The minute whose openings the current processes' keys have made (clearOfMinuteTurn). */
    let openedMinute = 0;
    const driverOptions = (side: Side) => {
      const gcTrace = gcRoot ? join(gcRoot, `${fn}-${side}-${traces.length}.txt`) : undefined;
      if (gcTrace) traces.push({ fn, side, file: gcTrace });
      return { profileDir: profileRoot ? join(profileRoot, fn, side) : undefined, gcTrace };
    };
    const open = async (cells: readonly CellOf[]) => {
      const drivers = {
        ours: await startDriver(ours.outfile, env, driverOptions('ours')),
        floor: await startDriver(
          floor.outfile,
          { ...env, FLOOR_OF: fn, FLOOR_COUNTS: floorCounts(fn, fnOps[0]!.expect) },
          driverOptions('floor'),
        ),
      };
      for (const d of Object.values(drivers)) children.push(d.child);
      // Warm both: every cell once, unmeasured (the JIT, the SDK's connections, the limiter's leases and minutes).
      openedMinute = minuteOf(Date.now());
      for (const cell of cells)
        for (const s of SIDES) await drivers[s].run(request(cell, Math.min(WARM_SECONDS, seconds)));
      return drivers;
    };
    /**
     * Keeps a cell's four slices inside one limiter minute. At a minute's turn each of a kind's keys opens its new
     * minute with two more writes (lambdas/storage/limit-store.ts; the floor's limiter the same), at 2-3x a call's
     * latency: the bench's 200 Business ids, in turn at one in flight, pay it on 1 call in ~135, where a key at that
     * rate pays it on 1 in ~27,000. A turn inside a cell put its openings on one side's slices alone when it fell in
     * the last slice (the other side paid them in the next cell), or on both: in 14 rounds of listPets Business, one
     * of each, that round's p99 ratio 1.15 (ours alone), against a median of 1.04. A cell that would cross the turn
     * waits for it; after a turn (waited for, or passed since the keys last opened theirs) both sides open their
     * keys' minutes unmeasured.
     */
    const clearOfMinuteTurn = async (drivers: Awaited<ReturnType<typeof open>>, cell: CellOf) => {
      const msLeft = 60_000 - (Date.now() % 60_000);
      if (msLeft <= 2 * seconds * 1000 + TURN_MARGIN_MS)
        await new Promise((resolve) => setTimeout(resolve, msLeft + 100));
      if (minuteOf(Date.now()) === openedMinute) return;
      openedMinute = minuteOf(Date.now());
      const opening = { ...cell, c: Math.max(...CONNECTIONS) };
      for (const s of SIDES) await drivers[s].run(request(opening, OPENING_SECONDS));
    };
    const close = async (drivers: Awaited<ReturnType<typeof open>>) => {
      for (const d of Object.values(drivers)) {
        await stopChild(d.child);
        children.splice(children.indexOf(d.child), 1);
      }
    };
    // A request's cells (an operation's sample or variant, with one key kind) in processes of their own (see the
    // round loop's comment above).
    for (const o of fnOps)
      for (const kind of kinds) {
        const cells = cellsOf([o]).filter((c) => c.k === kind);
        const lasting = opt.lasting ? await open(cells) : undefined;
        for (let r = 0; r < rounds; r++) {
          const drivers = lasting ?? (await open(cells));
          // Each side gets `seconds` in two halves, A B B A (the first side alternating from round to round and cell
          // to cell): a drift of the machine or of DynamoDB Local within the round weighs on both sides alike, where
          // one stretch each (A B) put all of it on one side's figure.
          for (const [i, cell] of cells.entries()) {
            await clearOfMinuteTurn(drivers, cell);
            const [a, b] = (r + i) % 2 ? (['floor', 'ours'] as const) : (['ours', 'floor'] as const);
            const slices: Record<Side, Slice[]> = { ours: [], floor: [] };
            for (const s of [a, b, b, a]) slices[s].push(await drivers[s].run(request(cell, seconds / 2)));
            const pair = { ours: cellOf(slices.ours), floor: cellOf(slices.floor) };
            const key = cellId({ op: cell.o.op, key: cell.k, connections: cell.c });
            runs.set(key, [...(runs.get(key) ?? []), pair]);
          }
          if (!lasting) await close(drivers);
        }
        if (lasting) await close(lasting);
      }
  }
}
