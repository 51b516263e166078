/** Phases 3 and 5: warm request path against the floor server, and the same API with the limiter off. */
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { seedBenchKey, seedPets, seededId } from '../lib/seed.ts';
import { load, median, printTable, ratio, round, startChild, stopChild, type LoadResult } from '../lib/util.ts';
import { BENCH_KEY, type BenchContext } from './context.ts';

export async function runWarm({ P, endpoint, seedClient, children, result, target, log }: BenchContext): Promise<void> {
  const prefix = 'bench-warm';
  const tableEnv = await provisionLocalTables(endpoint, prefix);
  await seedPets(seedClient, tableEnv.PETS_TABLE_NAME!, 0, P.warmSeed);
  await seedBenchKey(seedClient, tableEnv.KEYS_TABLE_NAME!, BENCH_KEY);
  const servers: Record<string, string> = {};
  for (const [name, args] of [
    ['api', ['bench/api-server.ts', endpoint, prefix, 'on']],
    ['api-limiter-off', ['bench/api-server.ts', endpoint, prefix, 'off']],
    ['floor', ['bench/floor-server.ts', endpoint, prefix]],
  ] as const) {
    const { info, child } = await startChild<{ url: string }>([...args], {
      ...process.env,
      LOG_LEVEL: 'WARN',
    });
    children.push(child);
    servers[name] = info.url;
  }
  const auth = { Authorization: `Bearer ${BENCH_KEY}` };
  const ops = [
    { op: 'listPets', path: '/pets?limit=20', method: 'GET' },
    { op: 'listPets?status', path: '/pets?limit=20&status=available', method: 'GET' },
    {
      op: 'createPet',
      path: '/pets',
      method: 'POST',
      body: JSON.stringify({ name: 'Bench', categoryId: 3, status: 'pending' }),
    },
    { op: 'getPet', path: `/pets/${seededId(42)}`, method: 'GET' },
  ];
  const conns = [1, 16];
  const names = Object.keys(servers);
  const runs = new Map<string, LoadResult[]>();
  const creates: Record<string, number> = {};
  const one = async (server: string, o: (typeof ops)[number], c: number, seconds: number) => {
    const r = await load({
      url: `${servers[server]}${o.path}`,
      method: o.method,
      connections: c,
      duration: seconds,
      headers: { ...auth, ...(o.body ? { 'Content-Type': 'application/json' } : {}) },
      ...(o.body ? { body: o.body } : {}),
    });
    if (o.op === 'createPet') creates[server] = (creates[server] ?? 0) + r.ok2xx;
    return r;
  };
  log('warm path: warming each server up');
  for (const s of names) for (const o of ops) await one(s, o, 4, 0.5);
  log(
    `warm path: ${P.warmRounds} rounds x ${ops.length} ops x ${conns.length} concurrencies x ${names.length} servers x ${P.warmSeconds} s`,
  );
  for (let r = 0; r < P.warmRounds; r++) {
    for (const o of ops) {
      for (const c of conns) {
        // Rotate the server order every cell, so no server always runs first or last.
        const k = (r + ops.indexOf(o) + c) % names.length;
        for (const s of [...names.slice(k), ...names.slice(0, k)]) {
          const key = `${s}|${o.op}|${c}`;
          runs.set(key, [...(runs.get(key) ?? []), await one(s, o, c, P.warmSeconds)]);
        }
      }
    }
  }
  const cell = (s: string, op: string, c: number) => {
    const rs = runs.get(`${s}|${op}|${c}`) ?? [];
    return {
      rps: round(median(rs.map((x) => x.rps)), 1),
      p50: median(rs.map((x) => x.p50)),
      p99: median(rs.map((x) => x.p99)),
      non2xx: rs.reduce((a, x) => a + x.non2xx, 0),
      errors: rs.reduce((a, x) => a + x.errors, 0),
    };
  };
  const warm = ops.flatMap((o) =>
    conns.map((c) => {
      const api = cell('api', o.op, c);
      const off = cell('api-limiter-off', o.op, c);
      const floor = cell('floor', o.op, c);
      return {
        op: o.op,
        connections: c,
        api,
        limiterOff: off,
        floor,
        ratioToFloor: round(ratio(api.rps, floor.rps), 3),
        limiterOnVsOff: round(ratio(api.rps, off.rps), 3),
      };
    }),
  );
  result.warm = { seededPets: P.warmSeed, seconds: P.warmSeconds, rounds: P.warmRounds, rows: warm };
  printTable(
    `3. Warm path: autocannon, median of ${P.warmRounds} rounds x ${P.warmSeconds} s (floor = node:http + same DynamoDB calls: key GetItem, limiter UpdateItem, op)`,
    ['op', 'conns', 'api req/s', 'p50 ms', 'p99 ms', 'floor req/s', 'p50', 'p99', 'x floor', 'non-2xx'],
    warm.map((w) => [
      w.op,
      w.connections,
      w.api.rps,
      w.api.p50,
      w.api.p99,
      w.floor.rps,
      w.floor.p50,
      w.floor.p99,
      w.ratioToFloor,
      w.api.non2xx + w.api.errors,
    ]),
  );
  printTable(
    '5. Limiter overhead: the same API with RATE_LIMITER=off, same run',
    ['op', 'conns', 'limiter on req/s', 'off req/s', 'on / off', 'on p50', 'off p50'],
    warm.map((w) => [w.op, w.connections, w.api.rps, w.limiterOff.rps, w.limiterOnVsOff, w.api.p50, w.limiterOff.p50]),
  );
  for (const w of warm)
    target('throughput >= 0.8x floor', `${w.op} c=${w.connections}`, w.ratioToFloor, '>= 0.8', w.ratioToFloor >= 0.8);
  for (const c of children.splice(0)) await stopChild(c);
  // Id allocation over every create of the warm phase: one counter write per block reserved.
  const { DynamoDBDocumentClient, GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const counter = await DynamoDBDocumentClient.from(seedClient).send(
    new GetCommand({ TableName: tableEnv.STATE_TABLE_NAME!, Key: { pk: 'ids#pets' }, ConsistentRead: true }),
  );
  const blocks = Number(counter.Item?.allocated ?? 0) / 1000;
  const apiCreates = (creates.api ?? 0) + (creates['api-limiter-off'] ?? 0);
  result.idAllocationWarm = {
    creates: apiCreates,
    counterWrites: blocks,
    writesPerCreate: round((apiCreates + blocks) / apiCreates, 4),
  };
}
