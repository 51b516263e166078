/**
 * Phase 5 (`--only=scale`): the limiter at the scale the plans sell. The real adapter (lambdas/storage/limit-store.ts)
 * on DynamoDB Local, many simulated containers (bench/lib/limiter-sim.ts) on a synthetic clock, every limiter write
 * asked for its consumed capacity and counted against its item and (synthetic) second, so each item's write units
 * per second can be held against DynamoDB's ~1,000 WCU/s per partition. A failed conditional write is billed too:
 * it is counted as 1 write unit (the size of these items, measured below, is well under 1 KB).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { LIMITER, PLANS, limiterShards, type PlanLimits } from '../../contract/plans.ts';
import { createLimitStore } from '../../lambdas/storage/limit-store.ts';
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { createTelemetry } from '../../lambdas/shared/observability.ts';
import { peakWindowRejections, simulate } from '../lib/limiter-sim.ts';
import { even, fleet, steady, type Traffic } from '../lib/traffic.ts';
import { printTable, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

interface Scenario {
  readonly name: string;
  readonly limits: PlanLimits;
  readonly traffic: () => Traffic;
  readonly skewMs?: number;
  /** How long a request occupies a container (more: more containers for the same rate). */
  readonly serviceMs?: number;
  /** Requests started together, and how many one container serves at once (simulate's options). */
  readonly inFlight?: number;
  readonly perContainer?: number;
}

/** DynamoDB's item size: attribute names plus values (numbers: about one byte per two digits, plus one). */
export function itemBytes(item: Record<string, unknown>): number {
  let n = 0;
  for (const [k, v] of Object.entries(item)) {
    n += Buffer.byteLength(k);
    if (typeof v === 'number') n += 1 + Math.ceil(String(Math.abs(v)).replace(/\./, '').replace(/^0+/, '').length / 2);
    else n += Buffer.byteLength(String(v));
  }
  return n;
}

function scenarios(quick: boolean): Scenario[] {
  const s = (seconds: number) => (quick ? Math.max(20, seconds / 3) : seconds);
  const plan = (p: 'free' | 'pro' | 'business') => PLANS[p].limits!;
  const ent = (perMinute: number): PlanLimits => ({ perMinute, perDay: perMinute * 1_440 });
  return [
    ...(['free', 'pro', 'business'] as const).map((p) => ({
      name: `${p} ${plan(p).perMinute}/min, 1.5x its limit evenly`,
      limits: plan(p),
      traffic: () => steady((1.5 * plan(p).perMinute) / 60, s(180)),
    })),
    {
      name: 'business, a whole minute in 2 s',
      limits: plan('business'),
      traffic: () => even(1_000, 2_000, 5_000),
    },
    {
      name: 'business 1.5x its limit, 5 containers, clocks 1 s apart',
      limits: plan('business'),
      skewMs: LIMITER.maxSkewMs,
      serviceMs: 200,
      traffic: () => steady(25, s(180)),
    },
    {
      name: 'free, fleet of 100 workers honouring 429s',
      limits: plan('free'),
      skewMs: LIMITER.maxSkewMs,
      traffic: () =>
        fleet(
          100,
          s(180),
          (i) => 500 + ((i * 7919) % 6_000),
          (i) => (i * 6007) % 60_000,
        ),
    },
    {
      name: 'enterprise 2,000/min at 1.2x, 40 in flight in one container',
      limits: ent(2_000),
      skewMs: LIMITER.maxSkewMs,
      serviceMs: 200,
      inFlight: 40,
      perContainer: Infinity,
      traffic: () => steady(40, s(180)),
    },
    {
      name: 'enterprise 2,000/min at 1.2x, 200 in flight, one each in many containers',
      limits: ent(2_000),
      skewMs: LIMITER.maxSkewMs,
      serviceMs: 2_000,
      inFlight: 200,
      traffic: () => steady(40, s(180)),
    },
    { name: 'enterprise 6,000/min at 1.2x', limits: ent(6_000), traffic: () => steady(120, s(120)) },
    { name: 'enterprise 100,000/min at 1.2x', limits: ent(100_000), traffic: () => steady(2_000, s(120)) },
    { name: 'enterprise 600,000/min at 1.1x', limits: ent(600_000), traffic: () => steady(11_000, s(60)) },
  ];
}

export async function runScale({ endpoint, result, target, log, argv }: BenchContext): Promise<void> {
  const quick = argv.includes('--quick');
  const env = await provisionLocalTables(endpoint, 'bench-scale');
  const storage = localStorage(endpoint, env);
  const telemetry = createTelemetry(
    { service: 'bench', namespace: 'bench', stage: 'local', logLevel: 'SILENT', metrics: false },
    () => undefined,
  );
  const counters = createLimitStore(storage, telemetry);
  // Per item and synthetic second: write units. Per scenario: requests and units.
  let simSecond = 0;
  let perItemSecond = new Map<string, number>();
  let requests = 0;
  let units = 0;
  for (const client of [storage.ddb, storage.once.ddb])
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { ReturnConsumedCapacity?: string; Key?: { pk?: unknown } };
        input.ReturnConsumedCapacity = 'TOTAL';
        const pk = input.Key?.pk;
        const item = typeof pk === 'string' ? pk : ((pk as { S?: string } | undefined)?.S ?? '?');
        const charge = (u: number) => {
          requests++;
          units += u;
          const k = `${item}@${simSecond}`;
          perItemSecond.set(k, (perItemSecond.get(k) ?? 0) + u);
        };
        try {
          const out = await next(args);
          charge(
            (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0,
          );
          return out;
        } catch (err) {
          // A failed condition is billed as a write of the item (one unit at these sizes).
          if ((err as Error).name === 'ConditionalCheckFailedException') charge(1);
          throw err;
        }
      },
      { step: 'initialize', name: 'benchScaleMeter' },
    );

  const rows: Array<Array<string | number>> = [];
  const out: Array<Record<string, unknown>> = [];
  let n = 0;
  const startMs = Date.UTC(2031, 2, 3, 10, 0, 0);
  for (const sc of scenarios(quick)) {
    perItemSecond = new Map();
    requests = 0;
    units = 0;
    const subject = `scale${n++}-${Date.now()}`;
    const t0 = performance.now();
    const r = await simulate(counters, {
      limits: sc.limits,
      traffic: sc.traffic(),
      startMs,
      skewMs: sc.skewMs,
      serviceMs: sc.serviceMs,
      inFlight: sc.inFlight,
      perContainer: sc.perContainer,
      subject,
      onTime: (t) => (simSecond = Math.floor(t / 1000)),
    });
    // Every item this key wrote, as stored.
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await storage.doc.send(
        new ScanCommand({
          TableName: storage.tables.state,
          FilterExpression: 'contains(pk, :s)',
          ExpressionAttributeValues: { ':s': subject },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const largest = Math.max(...items.map(itemBytes));
    const peak = Math.max(...perItemSecond.values());
    const fullWindows = [...r.windows.values()].filter((w) => w.rejected > 0);
    const shares = fullWindows.map((w) => w.admitted / sc.limits.perMinute);
    const maxShare = Math.max(0, ...[...r.windows.values()].map((w) => w.admitted / sc.limits.perMinute));
    const row = {
      scenario: sc.name,
      requests: r.requests,
      admitted: r.admitted,
      containers: r.containers,
      shards: limiterShards(sc.limits),
      limiterRequestsPerAdmitted: round(requests / Math.max(1, r.admitted), 4),
      wcuPerAdmitted: round(units / Math.max(1, r.admitted), 4),
      largestItemBytes: largest,
      peakWcuPerSecondOneItem: peak,
      maxWindowShare: round(maxShare, 4),
      minFullWindowShare: shares.length ? round(Math.min(...shares), 4) : null,
      maxRemainingError: r.maxRemainingError,
      peak429sInAWindow: peakWindowRejections(r, sc.limits).peak,
      banned: r.byStatus.key_banned ?? 0,
      unavailable: r.byStatus.service_unavailable ?? 0,
      seconds: round((performance.now() - t0) / 1000, 1),
    };
    out.push(row);
    rows.push([
      sc.name,
      r.requests,
      r.admitted,
      row.containers,
      row.shards,
      row.limiterRequestsPerAdmitted,
      row.wcuPerAdmitted,
      largest,
      peak,
      row.maxWindowShare,
      row.minFullWindowShare ?? '-',
      row.maxRemainingError,
      row.banned,
    ]);
    log(`scale: ${sc.name}: ${r.requests} requests in ${row.seconds} s`);
    target('limiter items < 1 KB', sc.name, largest, '< 1024 B', largest < 1_024);
    target('no item above 1,000 WCU/s', sc.name, peak, '< 1000', peak < 1_000);
    target('never over the limit in a window', sc.name, maxShare, '<= 1', maxShare <= 1);
    if (shares.length)
      target(
        'every full window admits at least 95% of the limit',
        sc.name,
        Math.min(...shares),
        '>= 0.95',
        Math.min(...shares) >= 0.95,
      );
    if (sc.limits.perMinute >= 60_000 && r.requests / (r.windows.size * 60) >= 900)
      target(
        'limiter writes per admitted at >= 1,000 requests/s',
        sc.name,
        row.limiterRequestsPerAdmitted,
        '<= 0.1',
        row.limiterRequestsPerAdmitted <= 0.1,
      );
  }
  printTable(
    'Limiter at scale (real adapter on DynamoDB Local, synthetic clock)',
    [
      'scenario',
      'requests',
      'admitted',
      'containers',
      'shards',
      'DDB req/admitted',
      'WCU/admitted',
      'largest item B',
      'peak WCU/s one item',
      'max window share',
      'min full window share',
      'max Remaining error',
      'bans',
    ],
    rows,
  );
  result.scale = out;
  storage.ddb.destroy();
}
