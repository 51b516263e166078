/**
 * Phase 3: the warm request path. Two kinds of key, each against a floor (bench/floor-server.ts) that does the same
 * DynamoDB work in plain node:http, so the ratio is the cost of our code and nothing else:
 * - Business keys, the exact path (every standard plan): one conditional write per request, on both sides. A pool
 *   of keys taken in turn, so no key reaches its 1,000/min (a 429 is cheaper than an admitted call);
 * - one Enterprise key at 600,000/min, the leased path: one write per lease of ~2 s of traffic, on both sides.
 * Both sides cache the authorizer's answer per token for the template's TTL. The DynamoDB requests each side made
 * per call are measured (each server counts its own) and printed beside the ratios: they must match. So is each
 * server process's CPU time per call, which the machine's load disturbs far less than its latency.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { SEED_PLAN, seedBenchKey, seedItems, seedKey, seededId } from '../lib/seed.ts';
import { ID_BLOCK, idCounterKey } from '../../lambdas/storage/item-store.ts';
import {
  load,
  median,
  printTable,
  ratioCells,
  round,
  spreadOf,
  startChild,
  stopChild,
  type AutocannonRequest,
  type LoadResult,
} from '../lib/util.ts';
import { selfTime, type CpuProfile } from '../lib/profile.ts';
import { ROOT } from '../lib/bundle.ts';
import { MEASURED_BY, ROUTE_OPS, httpRequestOf } from '../lib/bench-ops.ts';
import { BENCH_KEY, type BenchContext } from './context.ts';

/**
 * Business keys taken in turn. A server is measured at most ~half of each minute (the other half is the other
 * server's), so 48 keys stay under 1,000/min each up to ~1,400 calls/s; few enough that their minute openings and
 * authorizer refreshes (both sides make them alike) stay ~1 % of the DynamoDB requests. A 429 would show in non-2xx.
 */
const BUSINESS_KEYS = 48;
// The old key form's exact shape (ask_ + 43): the authorizer refuses any other shape without a read.
const businessKey = (i: number) => `ask_${`benchbusiness${String(i).padStart(4, '0')}`.padEnd(43, '0')}`;

/**
 * The route table's samples and their variants (bench/lib/bench-ops.ts), as HTTP requests naming a seeded item. An
 * operation answering 501 is left to the per-handler phase (3b): the floor server has nothing to do for it but count.
 */
const OPS = ROUTE_OPS.filter(MEASURED_BY.warm).map((o) => ({
  op: o.op,
  creates: o.creates,
  expect: o.expect,
  ...httpRequestOf(o, seededId(42)),
}));
const CONNECTIONS = [1, 16];
const SERVERS = ['api', 'floor'] as const;
type Server = (typeof SERVERS)[number];
/** `throttled`: the API server's invocations refused past a reserved concurrency (each answered 503). */
type Run = LoadResult & { ddbPerCall: number; cpuMsPerCall: number; throttled: number };

/** The non-2xx answers of a cell's rounds by status, as the table prints them: ` (429x55)`, or nothing. */
const statusesOf = (all: ReadonlyArray<Readonly<Record<string, number>>>): string => {
  const sum: Record<string, number> = {};
  for (const s of all) for (const [k, n] of Object.entries(s)) sum[k] = (sum[k] ?? 0) + n;
  const parts = Object.entries(sum).map(([k, n]) => `${k}x${n}`);
  return parts.length ? ` (${parts.join(' ')})` : '';
};

export async function runWarm(ctx: BenchContext): Promise<void> {
  const { argv, P, endpoint, seedClient, children, result, target, answers, log } = ctx;
  const prefix = 'bench-warm';
  const tableEnv = await provisionLocalTables(endpoint, prefix);
  await seedItems(seedClient, tableEnv, 0, P.warmSeed);
  await seedBenchKey(seedClient, tableEnv.KEYS_TABLE_NAME!, BENCH_KEY);
  const business = Array.from({ length: BUSINESS_KEYS }, (_, i) => businessKey(i));
  for (let i = 0; i < business.length; i += 32)
    await Promise.all(
      business
        .slice(i, i + 32)
        .map((k, j) =>
          seedKey(seedClient, tableEnv.KEYS_TABLE_NAME!, k, { keyId: `key_bench_business_${i + j}`, plan: 'business' }),
        ),
    );
  const scenarios = [
    { key: 'business', tokens: business },
    { key: 'enterprise', tokens: [BENCH_KEY] },
  ] as const;

  type Info = { url: string; statsUrl: string; authTtlSeconds?: number };
  const env = { ...process.env, LOG_LEVEL: 'WARN' };
  const api = await startChild<Info>(['bench/api-server.ts', endpoint, prefix, 'on'], env);
  children.push(api.child);
  const floor = await startChild<Info>(
    ['bench/floor-server.ts', endpoint, prefix, String(api.info.authTtlSeconds ?? 60)],
    env,
  );
  children.push(floor.child);
  const servers: Record<Server, Info> = { api: api.info, floor: floor.info };
  const statsOf = async (s: Server) =>
    (await (await fetch(servers[s].statsUrl)).json()) as { ddb: number; cpuMicros: number; throttled?: number };

  // One request per key in turn (each connection starts at the first key and goes round).
  const requestsFor = (s: Server, tokens: readonly string[], o: (typeof OPS)[number]): AutocannonRequest[] => {
    const u = new URL(`${servers[s].url}${o.path}`);
    return tokens.map((t) => ({
      method: o.method,
      path: `${u.pathname}${u.search}`,
      headers: {
        Authorization: `Bearer ${t}`,
        ...(o.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(o.body === undefined ? {} : { body: o.body }),
    }));
  };
  let apiCreates = 0;
  const one = async (s: Server, tokens: readonly string[], o: (typeof OPS)[number], c: number, seconds: number) => {
    const before = await statsOf(s);
    const r = await load({
      url: servers[s].url,
      connections: c,
      duration: seconds,
      requests: requestsFor(s, tokens, o),
    });
    if (s === 'api' && o.creates) apiCreates += r.ok2xx;
    const after = await statsOf(s);
    const calls = Math.max(1, r.total);
    return {
      ...r,
      ddbPerCall: (after.ddb - before.ddb) / calls,
      cpuMsPerCall: (after.cpuMicros - before.cpuMicros) / 1000 / calls,
      throttled: (after.throttled ?? 0) - (before.throttled ?? 0),
    };
  };

  log('warm path: every key once on each server (fills both authorizer caches), then each op for 0.5 s');
  for (const s of SERVERS)
    for (const sc of scenarios) {
      await load({
        url: servers[s].url,
        connections: 1,
        amount: sc.tokens.length,
        requests: requestsFor(s, sc.tokens, OPS[0]),
      });
      for (const o of OPS) await one(s, sc.tokens, o, 4, 0.5);
    }
  const cells = scenarios.flatMap((sc) => OPS.flatMap((o) => CONNECTIONS.map((c) => ({ sc, o, c }))));
  log(`warm path: ${P.warmRounds} rounds x ${cells.length} cells x ${SERVERS.length} servers x ${P.warmSeconds} s`);
  const runs = new Map<string, Array<Record<Server, Run>>>();
  const profiling = argv.includes('--cpu-prof');
  if (profiling) for (const s of SERVERS) await fetch(`${servers[s].statsUrl}profile`, { method: 'POST' });
  for (let r = 0; r < P.warmRounds; r++) {
    for (const [i, { sc, o, c }] of cells.entries()) {
      // API and floor back to back, their order swapped every cell and every round.
      const order = (r + i) % 2 ? (['floor', 'api'] as const) : (['api', 'floor'] as const);
      const pair = {} as Record<Server, Run>;
      for (const s of order) pair[s] = await one(s, sc.tokens, o, c, P.warmSeconds);
      const k = `${sc.key}|${o.op}|${c}`;
      runs.set(k, [...(runs.get(k) ?? []), pair]);
    }
  }
  if (profiling) {
    const calls = (s: Server) => [...runs.values()].flat().reduce((n, x) => n + x[s].total, 0);
    const profiles = {} as Record<Server, CpuProfile>;
    for (const s of SERVERS) profiles[s] = (await (await fetch(`${servers[s].statsUrl}profile`)).json()) as CpuProfile;
    reportProfiles(ctx, profiles, { api: calls('api'), floor: calls('floor') });
  }
  for (const c of children.splice(0)) await stopChild(c);
  for (const { sc, o, c } of cells)
    for (const s of SERVERS) {
      const rs = runs.get(`${sc.key}|${o.op}|${c}`) ?? [];
      const got: Record<string, number> = {};
      for (const x of rs) for (const [status, n] of Object.entries(x[s].answers)) got[status] = (got[status] ?? 0) + n;
      // An authorizer invocation refused past its reserved concurrency is a 503 of the local gateway's emulation of
      // Lambda's throttle (16 misses of one key at once: docs/performance.md), counted apart in the table.
      const throttled = rs.reduce((a, x) => a + x[s].throttled, 0);
      if (throttled && got['503']) got['503'] = Math.max(0, got['503'] - throttled);
      answers(`warm ${sc.key} ${o.op} c=${c} ${s}`, o.expect, got);
    }

  const rows = cells.map(({ sc, o, c }) => {
    const rs = runs.get(`${sc.key}|${o.op}|${c}`) ?? [];
    const side = (s: Server) => ({
      rps: round(median(rs.map((x) => x[s].rps)), 1),
      p50: round(median(rs.map((x) => x[s].p50)), 2),
      p99: round(median(rs.map((x) => x[s].p99)), 2),
      ddbPerCall: round(median(rs.map((x) => x[s].ddbPerCall)), 3),
      cpuMsPerCall: round(median(rs.map((x) => x[s].cpuMsPerCall)), 3),
      non2xx: rs.reduce((a, x) => a + x[s].non2xx + x[s].errors, 0),
      statuses: statusesOf(rs.map((x) => x[s].statuses)),
      throttled: rs.reduce((a, x) => a + x[s].throttled, 0),
    });
    const rps = spreadOf(
      rs.map((x) => x.api.rps / x.floor.rps),
      (v) => v >= 0.9,
    );
    const p99 = spreadOf(
      rs.map((x) => x.api.p99 / x.floor.p99),
      (v) => v <= 1.1,
    );
    return { key: sc.key, op: o.op, connections: c, api: side('api'), floor: side('floor'), rps, p99 };
  });
  result.warm = {
    seededPets: P.warmSeed,
    seconds: P.warmSeconds,
    rounds: P.warmRounds,
    businessKeys: BUSINESS_KEYS,
    rows,
  };
  printTable(
    `3. Warm path: autocannon, ${P.warmRounds} rounds x ${P.warmSeconds} s per cell; floor = node:http doing the same DynamoDB work (x floor: median of per-round ratios, spread p25-p75)`,
    [
      'key',
      'op',
      'conns',
      'api req/s',
      'floor req/s',
      'x floor',
      'spread',
      'api p99',
      'floor p99',
      'p99 x',
      'spread',
      'ddb/call api',
      'floor',
      'cpu ms/call api',
      'floor',
      'non-2xx api/floor',
    ],
    rows.map((w) => [
      w.key,
      w.op,
      w.connections,
      ...ratioCells(w.api.rps, w.floor.rps, w.rps),
      ...ratioCells(w.api.p99, w.floor.p99, w.p99),
      w.api.ddbPerCall,
      w.floor.ddbPerCall,
      w.api.cpuMsPerCall,
      w.floor.cpuMsPerCall,
      `${w.api.non2xx}${w.api.statuses}${w.api.throttled ? ` [${w.api.throttled} authorizer throttled]` : ''}/${w.floor.non2xx}${w.floor.statuses}`,
    ]),
  );
  for (const w of rows) {
    const subject = `${w.key} ${w.op} c=${w.connections}`;
    target('throughput >= 0.9x floor', subject, w.rps.median, '>= 0.9', w.rps.verdict);
    target('p99 <= 1.1x floor', subject, w.p99.median, '<= 1.1', w.p99.verdict);
  }
  // Id allocation over every create of the warm phase: one counter write per block reserved, on the counter of
  // each table of items (bench/lib/seed.ts).
  const { DynamoDBDocumentClient, GetCommand } = await import('@aws-sdk/lib-dynamodb');
  let blocks = 0;
  for (const s of SEED_PLAN.filter((x) => x.kind === 'items')) {
    const counter = await DynamoDBDocumentClient.from(seedClient).send(
      new GetCommand({
        TableName: tableEnv.STATE_TABLE_NAME!,
        Key: { pk: idCounterKey(s.table) },
        ConsistentRead: true,
      }),
    );
    blocks += Number(counter.Item?.allocated ?? 0) / ID_BLOCK;
  }
  result.idAllocationWarm = {
    creates: apiCreates,
    counterWrites: blocks,
    writesPerCreate: round((apiCreates + blocks) / Math.max(1, apiCreates), 4),
  };
}

/**
 * `--cpu-prof`: both servers were profiled over exactly the measured rounds. Writes the profiles (open them in
 * Chrome DevTools) and prints where each server's CPU time per call goes, by package or folder, and our functions
 * that take the most: the part of the gap that is our own code, named.
 */
function reportProfiles(
  { result }: BenchContext,
  profiles: Record<Server, CpuProfile>,
  calls: Record<Server, number>,
): void {
  const dir = join(ROOT, 'bench/results/profiles');
  mkdirSync(dir, { recursive: true });
  for (const s of SERVERS) writeFileSync(join(dir, `warm-${s}.cpuprofile`), JSON.stringify(profiles[s]));
  const api = selfTime(profiles.api);
  const floor = selfTime(profiles.floor);
  const perCall = (us: number, s: Server) => round(us / Math.max(1, calls[s]), 1);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const modules = [...new Set([...api.modules.keys(), ...floor.modules.keys()])]
    .map((m) => ({
      module: m,
      api: perCall(api.modules.get(m) ?? 0, 'api'),
      floor: perCall(floor.modules.get(m) ?? 0, 'floor'),
    }))
    .sort((a, b) => b.api - b.floor - (a.api - a.floor));
  const ours = [...api.ours].map(([fn, us]) => ({ fn, us: perCall(us, 'api') })).sort((a, b) => b.us - a.us);
  result.warmProfile = {
    files: ['bench/results/profiles/warm-api.cpuprofile', 'bench/results/profiles/warm-floor.cpuprofile'],
    cpuUsPerCall: { api: perCall(sum(api.modules), 'api'), floor: perCall(sum(floor.modules), 'floor') },
    modules: modules.slice(0, 25),
    ourFunctions: ours.slice(0, 25),
  };
  printTable(
    `Where CPU per call goes (--cpu-prof, self time, idle excluded; all measured cells): api ${perCall(sum(api.modules), 'api')} us, floor ${perCall(sum(floor.modules), 'floor')} us`,
    ['package or folder', 'api us/call', 'floor us/call', 'difference'],
    modules.slice(0, 15).map((m) => [m.module, m.api, m.floor, round(m.api - m.floor, 1)]),
  );
  printTable(
    'Our functions by self time in the API server (us/call)',
    ['function', 'us/call'],
    ours.slice(0, 12).map((o) => [o.fn, o.us]),
  );
}
