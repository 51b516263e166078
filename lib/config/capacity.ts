/**
 * The capacity model: every hop a request crosses (WAF, stage throttle, authorizer, usage plans, functions, limiter
 * items, tables), the capacity a stage gives it and the demand of a customer mix's contracts. The stage's edge
 * figures are sized here from the account's quotas (edgeFor, planThrottles). `npm run capacity`, the docs' table
 * and test/unit/capacity.test.ts all read capacityRows, so no guard is sized in one place and checked in another.
 * - A ceiling is an account quota (API Gateway's throttle, Lambda's concurrency, DynamoDB's per-table throughput),
 *   shared by every stage and lifted only by a Service Quotas increase. Its demand is the mix's whole contract;
 *   below 1, the row names the increase.
 * - Every other hop is ours and needs headroom >= 1, or our own guard refuses a customer inside its contract.
 */
import {
  ACCOUNT_THROTTLE,
  LIMITER,
  KEY_BURST,
  MAX_CUSTOM_LIMITS,
  PLANS,
  PLAN_NAMES,
  STANDARD_PLANS,
  banThreshold,
  type PlanLimits,
  type PlanName,
} from '../../contract/plans.ts';
import { AUTHORIZER, ROUTES, type FunctionAccess } from '../../contract/routes.ts';
import { PAGE_SIZE } from '../../contract/schemas.ts';

/**
 * The account quotas a stage is deployed under (per account and Region; every stage in the account shares them).
 * AWS's defaults unless a stage says it was raised (context `animal-store:<stage>:lambdaConcurrency=…`, …).
 */
export interface AccountQuotas {
  /** API Gateway's account throttle: requests per second (default 10,000; Service Quotas "Throttle rate"). */
  readonly apiRate: number;
  /** API Gateway's account token bucket (default 5,000; raised with the rate). */
  readonly apiBurst: number;
  /** Lambda's concurrent executions (default 1,000; Service Quotas "Concurrent executions"). */
  readonly lambdaConcurrency: number;
  /** DynamoDB on-demand throughput per table, request units per second (default 40,000 read and 40,000 write). */
  readonly tableUnits: number;
}

export const DEFAULT_ACCOUNT_QUOTAS: AccountQuotas = {
  apiRate: ACCOUNT_THROTTLE.rateLimit,
  apiBurst: ACCOUNT_THROTTLE.burstLimit,
  lambdaConcurrency: 1_000,
  tableUnits: 40_000,
};

/**
 * Durations the concurrency is sized with (Little's law: concurrency = rate x duration). The authorizer's warm
 * invocation: one BatchGetItem in the Region plus SHA-256 and Lambda's per-invoke overhead (the bench prints the
 * local figure beside it). A cold start (init + invoke) took 170-190 ms locally: a burst's environments are cold, but
 * a burst needs one environment per request in flight whatever its length, so cold starts change how long a burst
 * holds them, not how many it needs. An operation: a limiter write and its own one or two DynamoDB calls.
 */
export const AUTHORIZER_WARM_MS = 25;
export const AUTHORIZER_COLD_MS = 200;
export const FUNCTION_WARM_MS = 50;
/** Uncached requests per second the authorizer answers at `concurrency` (what it holds before Lambda throttles). */
export const authorizerCapacity = (concurrency: number, durationMs = AUTHORIZER_WARM_MS): number =>
  Math.floor((concurrency * 1000) / durationMs);
/** Lambda refuses a reservation that leaves the account fewer unreserved executions than this. */
export const UNRESERVED_MINIMUM = 100;
/** What one DynamoDB partition (so one item) takes in writes per second. */
export const PARTITION_WRITE_UNITS = 1_000;

/** What a listed item takes on average in a page DynamoDB reads (a pet record: ~300 bytes). */
export const LISTED_ITEM_BYTES = 300;

/**
 * Request units one call of a DynamoDB action takes: a write of an item under 1 KB (every item the functions write
 * is) 1 WRU, 2 inside a transaction; a get of one item under 4 KB 1 RRU; a scan or query a full page
 * (PAGE_SIZE.max items), eventually consistent: half a unit per 4 KB. An action with no cost here is refused, so a
 * new one gets one before any figure uses it.
 */
export function actionUnits(action: string, transactional = false): { kind: 'read' | 'write'; units: number } {
  switch (action) {
    case 'dynamodb:PutItem':
    case 'dynamodb:UpdateItem':
    case 'dynamodb:DeleteItem':
      return { kind: 'write', units: transactional ? 2 : 1 };
    case 'dynamodb:GetItem':
    case 'dynamodb:BatchGetItem':
      return { kind: 'read', units: 1 };
    case 'dynamodb:Scan':
    case 'dynamodb:Query':
      return { kind: 'read', units: Math.ceil((PAGE_SIZE.max * LISTED_ITEM_BYTES) / 4096) / 2 };
    default:
      throw new Error(`${action}: no request-unit cost for it in the capacity model (lib/config/capacity.ts)`);
  }
}

/** The request units one call takes of one table, reads and writes apart (on-demand caps each apart). */
export interface TableUnits {
  readonly table: string;
  readonly kind: 'read' | 'write';
  readonly units: number;
}

/**
 * What one call of a function with `access` takes of each table, from its grants: its writes to a table add up (the
 * limiter's, then its own, in the same call), its reads take one access path (a get, a scan or a query, by
 * request) so the dearest counts, and the actions of one grant are alternatives (a claim, or its release).
 */
export function unitsOf(access: FunctionAccess): TableUnits[] {
  const out = new Map<string, TableUnits>();
  for (const g of access.tables) {
    const costs = g.actions.map((a) => actionUnits(a, g.transactional));
    for (const kind of ['read', 'write'] as const) {
      const own = Math.max(0, ...costs.filter((c) => c.kind === kind).map((c) => c.units));
      if (own === 0) continue;
      const key = `${g.table.id} ${kind}`;
      const before = out.get(key)?.units ?? 0;
      out.set(key, { table: g.table.id, kind, units: kind === 'write' ? before + own : Math.max(before, own) });
    }
  }
  return [...out.values()];
}

/** The dearest call of any one table: the operation (or the authorizer) and what it takes. */
export function dearestCall(
  functions: readonly { readonly name: string; readonly access: FunctionAccess }[] = [
    ...ROUTES.map((r) => ({ name: r.operationId, access: r.access })),
    AUTHORIZER,
  ],
): TableUnits & { readonly name: string } {
  const all = functions.flatMap((f) => unitsOf(f.access).map((u) => ({ ...u, name: f.name })));
  return all.reduce((a, b) => (b.units > a.units ? b : a));
}

const DEAREST = dearestCall();

/**
 * The most request units one admitted API call takes of any one table, read or write, from every operation's grants
 * (each includes the limiter's write, LIMITER_GRANT) and the authorizer's: an operation with more table work raises
 * it, and with it the tables' ceiling (requestUnitCeiling) and the capacity rows.
 */
export const UNITS_PER_CALL = DEAREST.units;

/** The authorized methods: the operations (each is a method with its own stage bucket). */
const METHODS = ROUTES.length;

export interface Edge {
  /** The stage's share of the account's rate: what its per-method rates add up to at most. */
  readonly stageRate: number;
  /** The stage's default method throttle (applied per method, before the authorizer). */
  readonly stageThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  /** The authorizer's reserved concurrency: what a burst of uncached requests the stage admits needs at once. */
  readonly authorizerReservedConcurrency: number;
  /** WAF: requests one address not on the customers' egress list may send in 5 minutes (keyed or not). */
  readonly wafRequestsPerIpPer5Minutes: number;
  /** WAF: requests one bearer key may send in 5 minutes from addresses not on the list. */
  readonly wafRequestsPerKeyPer5Minutes: number;
  /** WAF: requests one listed address (a customer's egress) may send in 5 minutes. */
  readonly wafListedRequestsPer5Minutes: number;
  /** Requests admitted by every method's bucket at once (at most the account's bucket). */
  readonly atOnce: number;
}

/**
 * Concurrency a burst of `atOnce` requests and the sustained `rate` need of the authorizer and of the functions, on
 * a stage with `share` of the account (Lambda's unreserved minimum is the account's: each stage keeps its share).
 */
function concurrencyNeeds(atOnce: number, rate: number, share = 1): { authorizer: number; functions: number } {
  return {
    authorizer: Math.max(atOnce, Math.ceil((rate * AUTHORIZER_WARM_MS) / 1000)),
    functions: Math.max(atOnce, Math.ceil((rate * FUNCTION_WARM_MS) / 1000), Math.ceil(UNRESERVED_MINIMUM * share)),
  };
}

/**
 * What one key may send in any 5-minute window under its contract: a 300 s window meets at most 6 minute windows,
 * each its budget plus the 429s a fleet honouring them may cause before a ban (banThreshold), and never more than
 * the account admits in 5 minutes (a full bucket and 300 s of refill).
 */
export function fiveMinuteDemand(limits: PlanLimits, q: AccountQuotas = DEFAULT_ACCOUNT_QUOTAS): number {
  return Math.min(6 * (limits.perMinute + banThreshold(limits)), q.apiRate * 300 + q.apiBurst);
}

/** The largest contract a plan with fixed limits sells: what one address or key may send without being listed. */
export const LARGEST_STANDARD_LIMITS: PlanLimits = STANDARD_PLANS.map((p) => PLANS[p].limits!).reduce((a, b) =>
  b.perMinute > a.perMinute ? b : a,
);

/** Requests per second a source sends on average at a WAF limit per 5 minutes. */
export const perSecondAt = (per5Minutes: number): number => per5Minutes / 300;

/**
 * The stage's edge, sized from the account's quotas and the stage's share of them (1 in an account of its own):
 * - the stage's rate is its share split evenly over its methods, so a flood on one method leaves the others theirs;
 * - uncached concurrent requests each invoke the authorizer (the gateway does not coalesce them), so its reservation
 *   and the functions' unreserved rest each hold every method's bucket at once. The bucket is the largest the share's
 *   concurrency holds twice: 125 per method at the default 1,000. Past it the gateway answers 429, never a 5xx;
 * - WAF lets one address or key send the largest fixed-limit contract (Business and its fleet's 429s: 12,000 in 5
 *   minutes, 40 req/s). Listed addresses (`customerEgress`) get the largest contract the admin tool sells.
 */
export function edgeFor(q: AccountQuotas, share = 1, methods: number = METHODS): Edge {
  const stageRate = Math.max(methods, Math.floor(q.apiRate * share));
  const bucket = Math.max(methods, Math.floor(q.apiBurst * share));
  const executions = Math.floor(q.lambdaConcurrency * share);
  const fits = (x: number) => {
    const n = concurrencyNeeds(x, stageRate, share);
    return n.authorizer + n.functions <= executions;
  };
  let x = bucket;
  while (x > methods && !fits(x)) x--;
  const burstLimit = Math.max(1, Math.floor(x / methods));
  const atOnce = Math.min(bucket, burstLimit * methods);
  const perSource = fiveMinuteDemand(LARGEST_STANDARD_LIMITS, q);
  return {
    stageRate,
    stageThrottle: { rateLimit: Math.floor(stageRate / methods), burstLimit },
    authorizerReservedConcurrency: concurrencyNeeds(atOnce, stageRate, share).authorizer,
    wafRequestsPerIpPer5Minutes: perSource,
    wafRequestsPerKeyPer5Minutes: perSource,
    wafListedRequestsPer5Minutes: fiveMinuteDemand(MAX_CUSTOM_LIMITS, q),
    atOnce,
  };
}

/** A customer mix: how many keys of each plan, and the Enterprise contract assumed for each Enterprise key. */
export interface CustomerMix {
  readonly free: number;
  readonly pro: number;
  readonly business: number;
  readonly enterprise: number;
  readonly enterpriseLimits: PlanLimits;
}

/** The mix we sell per stage: 1,000,000 keys, 100,000 of them paying. */
export const REFERENCE_MIX: CustomerMix = {
  free: 900_000,
  pro: 70_000,
  business: 25_000,
  enterprise: 5_000,
  enterpriseLimits: { perMinute: 5_000, perDay: 1_000_000 },
};

/** What a stage's hops are, for the model (lib/config/stages.ts StageConfig has them all). */
export interface StageCapacity {
  readonly name: string;
  readonly accountQuotas: AccountQuotas;
  /**
   * The stage's share of the account (0 to 1): its rate, bucket and Lambda concurrency are that much of the account's.
   */
  readonly accountShare: number;
  readonly stageThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly authorizerReservedConcurrency: number;
  readonly wafRequestsPerIpPer5Minutes: number;
  readonly wafRequestsPerKeyPer5Minutes: number;
  readonly wafListedRequestsPer5Minutes: number;
  /** The tables' on-demand maximum throughput, request units per second. */
  readonly tableMaxUnits: number;
  /** The Free plan's share of the stage throttle (planThrottles). */
  readonly freeShare: number;
}

/** The stage's rate: its share of the account's. */
export const stageRateOf = (stage: Pick<StageCapacity, 'accountQuotas' | 'accountShare'>): number =>
  Math.floor(stage.accountQuotas.apiRate * stage.accountShare);

/** A usage plan's token bucket: requests per second, and how many at once. */
export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * Each plan's usage plan, which all its keys share through its one API key: the paying plans get the stage's whole
 * share of the account (its rate, and every method's bucket at once), so the gateway refuses no paying key the
 * account would admit; Free gets `freeShare` of it, so Free keys at their full contract, however many (a viral
 * sign-up, leaked keys), leave the paying plans the rest. Per-key limits are the functions' limiter's.
 */
export function planThrottles(
  stage: Pick<StageCapacity, 'stageThrottle' | 'freeShare' | 'accountQuotas' | 'accountShare'>,
): Record<PlanName, Throttle> {
  const whole: Throttle = {
    rateLimit: Math.min(stageRateOf(stage), stage.stageThrottle.rateLimit * METHODS),
    burstLimit: Math.min(stage.accountQuotas.apiBurst, stage.stageThrottle.burstLimit * METHODS),
  };
  const free: Throttle = {
    rateLimit: Math.max(1, Math.floor(whole.rateLimit * stage.freeShare)),
    burstLimit: Math.max(1, Math.floor(whole.burstLimit * stage.freeShare)),
  };
  return Object.fromEntries(PLAN_NAMES.map((p) => [p, p === 'free' ? free : whole])) as Record<PlanName, Throttle>;
}

export interface CapacityRow {
  readonly hop: string;
  readonly capacity: number;
  /** What the contracts ask of the hop: from the plans and the mix, never from the hop's own sizing. */
  readonly demand: number;
  readonly unit: string;
  /** capacity / demand (Infinity when nothing of the contract reaches it). */
  readonly headroom: number;
  /** An account quota: below 1, `raise` says what to ask for. */
  readonly ceiling: boolean;
  readonly raise?: string;
  /** How many sources (addresses, keys) it takes to fill the hop, sending as much as WAF lets each through. */
  readonly sources: string;
  /** What a customer inside its contract sees when the hop is full. */
  readonly whenFull: string;
  readonly note: string;
}

const limitsOf = (plan: PlanName, mix: CustomerMix): PlanLimits =>
  plan === 'enterprise' ? mix.enterpriseLimits : PLANS[plan].limits!;
const PLAN_KEYS = PLAN_NAMES;
const whole = (x: number) => Math.ceil(x).toLocaleString('en-US');

/** Every hop for `mix` on `stage`, ceilings first, then in the order a request crosses them. */
export function capacityRows(stage: StageCapacity, mix: CustomerMix = REFERENCE_MIX): CapacityRow[] {
  const q = stage.accountQuotas;
  const rows: CapacityRow[] = [];
  const row = (r: Omit<CapacityRow, 'headroom'>) =>
    rows.push({ ...r, headroom: r.demand === 0 ? Infinity : r.capacity / r.demand });
  const contractRate = PLAN_KEYS.reduce((s, p) => s + (mix[p] * limitsOf(p, mix).perMinute) / 60, 0);
  const contractDay = PLAN_KEYS.reduce((s, p) => s + mix[p] * limitsOf(p, mix).perDay, 0);
  const keys = PLAN_KEYS.reduce((s, p) => s + mix[p], 0);
  const stageRate = stageRateOf(stage);
  // What the account lets through to the hops after it.
  const admitted = Math.min(contractRate, stageRate);
  const largestKey = Math.max(...STANDARD_PLANS.map((p) => PLANS[p].limits!.perMinute), MAX_CUSTOM_LIMITS.perMinute);
  // Every key's declared burst at once, as far as the account's bucket holds.
  const contractBurst = Math.min(Math.floor(q.apiBurst * stage.accountShare), KEY_BURST * keys);
  const needed = concurrencyNeeds(contractBurst, admitted);
  // What one source gets through WAF, on average over its window: unlisted addresses and keys, listed addresses.
  const perAddress = perSecondAt(stage.wafRequestsPerIpPer5Minutes);
  const perKey = perSecondAt(stage.wafRequestsPerKeyPer5Minutes);
  const perListed = perSecondAt(stage.wafListedRequestsPer5Minutes);
  const flooders = (rate: number) =>
    `${whole(rate / perAddress)} addresses or ${whole(rate / perKey)} keys at WAF's ${perAddress.toFixed(0)} req/s each; ${whole(rate / perListed)} listed`;
  const burst = (size: number) =>
    `${whole(size / KEY_BURST)} keys' bursts at once; 1 address (WAF counts over 5 minutes, a burst passes it)`;
  const throttled = 'the gateway’s 429 with Retry-After: 1, while they send';
  const perSourceHop = 'per source: fills for none but the source over it';
  const blocked = '429 rate_limited with Retry-After: 300 until its rate falls back under';

  row({
    hop: 'Account: API Gateway throttle',
    capacity: q.apiRate,
    demand: Math.ceil(contractRate),
    unit: 'req/s',
    ceiling: true,
    raise: `API Gateway "Throttle rate" to ${Math.ceil(contractRate).toLocaleString('en-US')} req/s`,
    sources: flooders(q.apiRate),
    whenFull: throttled,
    note: 'every customer at its minute rate at once; shared by every API of the account',
  });
  row({
    hop: 'Account: requests a day',
    capacity: q.apiRate * 86_400,
    demand: contractDay,
    unit: 'req/day',
    ceiling: true,
    raise: `API Gateway "Throttle rate" to ${Math.ceil(contractDay / 86_400).toLocaleString('en-US')} req/s`,
    sources: flooders(q.apiRate),
    whenFull: throttled,
    note: 'every customer spending its whole day',
  });
  row({
    hop: 'Account: Lambda concurrency',
    capacity: q.lambdaConcurrency,
    demand: needed.authorizer + needed.functions,
    unit: 'executions',
    ceiling: true,
    raise: `Lambda "Concurrent executions" to ${(needed.authorizer + needed.functions).toLocaleString('en-US')}`,
    sources: burst(q.lambdaConcurrency / 2),
    whenFull: 'the stage’s buckets keep it below: the gateway’s 429 first',
    note: `every key's burst (${KEY_BURST} at once) up to the account's bucket (${contractBurst.toLocaleString('en-US')}), through the authorizer and a function`,
  });
  row({
    hop: 'Account: DynamoDB per-table throughput',
    capacity: q.tableUnits,
    demand: Math.ceil(admitted * UNITS_PER_CALL),
    unit: 'units/s',
    ceiling: true,
    raise: `DynamoDB "Table-level on-demand throughput" to ${Math.ceil(admitted * UNITS_PER_CALL).toLocaleString('en-US')}`,
    sources: flooders(q.tableUnits / UNITS_PER_CALL),
    whenFull: 'the function’s 503 with Retry-After',
    note: `what the stage admits of the contracts, ${UNITS_PER_CALL} units per call at most (${DEAREST.name}'s ${DEAREST.kind} of the ${DEAREST.table} table)`,
  });

  row({
    hop: 'WAF: per IP (5 min, every request)',
    capacity: stage.wafRequestsPerIpPer5Minutes,
    demand: fiveMinuteDemand(LARGEST_STANDARD_LIMITS, q),
    unit: 'req/5 min',
    ceiling: false,
    sources: perSourceHop,
    whenFull: blocked,
    note: `one Business key's contract and its fleet's 429s from one address; a customer sending more lists its addresses. A forged token of a key's form costs one read: ${perAddress.toFixed(0)} reads/s per address`,
  });
  row({
    hop: 'WAF: per key (5 min)',
    capacity: stage.wafRequestsPerKeyPer5Minutes,
    demand: fiveMinuteDemand(LARGEST_STANDARD_LIMITS, q),
    unit: 'req/5 min',
    ceiling: false,
    sources: perSourceHop,
    whenFull: blocked,
    note: 'the largest plan with fixed limits, from any number of addresses not listed: a banned or spent key holds no more',
  });
  row({
    hop: 'WAF: per listed address (5 min)',
    capacity: stage.wafListedRequestsPer5Minutes,
    demand: fiveMinuteDemand(MAX_CUSTOM_LIMITS, q),
    unit: 'req/5 min',
    ceiling: false,
    sources: perSourceHop,
    whenFull: blocked,
    note: 'the largest contract the admin tool sells, with its fleet’s 429s',
  });
  row({
    hop: 'Stage throttle: rate per method',
    capacity: stage.stageThrottle.rateLimit,
    demand: Math.ceil(largestKey / 60),
    unit: 'req/s',
    ceiling: false,
    sources: flooders(stage.stageThrottle.rateLimit),
    whenFull: `${throttled}; the other methods are served`,
    note: 'the largest contract the admin tool sells, all on one method',
  });
  row({
    hop: 'Stage throttle: every method together',
    capacity: stageRate,
    demand: stage.stageThrottle.rateLimit * METHODS,
    unit: 'req/s',
    ceiling: false,
    sources: flooders(stageRate),
    whenFull: throttled,
    note: `the per-method rates added up: at most the stage's share of the account (${stage.accountShare})`,
  });
  row({
    hop: 'Stage throttle: burst per method',
    capacity: stage.stageThrottle.burstLimit,
    demand: 2 * KEY_BURST,
    unit: 'requests',
    ceiling: false,
    sources: burst(stage.stageThrottle.burstLimit),
    whenFull: 'the gateway’s 429 with Retry-After: 1; refilled in well under a second',
    note: `two keys' declared bursts (${KEY_BURST} at once each) on one method at the same instant`,
  });
  const atOnce = Math.min(Math.floor(q.apiBurst * stage.accountShare), stage.stageThrottle.burstLimit * METHODS);
  row({
    hop: 'Authorizer: reserved concurrency',
    capacity: stage.authorizerReservedConcurrency,
    demand: concurrencyNeeds(Math.min(atOnce, contractBurst), admitted).authorizer,
    unit: 'executions',
    ceiling: false,
    sources: `${whole(atOnce)} distinct uncached tokens at once: ${burst(atOnce).split('; ')[1]}`,
    whenFull: 'the authorizer’s 503 with Retry-After',
    note: `the contracts' bursts as far as the stage's buckets let them through (${atOnce.toLocaleString('en-US')} at once; cold: ~${AUTHORIZER_COLD_MS} ms each), or every admitted request uncached (TTL 0) at ${AUTHORIZER_WARM_MS} ms`,
  });
  row({
    hop: 'Functions: unreserved concurrency',
    capacity: Math.floor(q.lambdaConcurrency * stage.accountShare) - stage.authorizerReservedConcurrency,
    demand: concurrencyNeeds(Math.min(atOnce, contractBurst), admitted).functions,
    unit: 'executions',
    ceiling: false,
    sources: burst(atOnce),
    whenFull: 'the function’s 503 with Retry-After',
    note: `the contracts' bursts as far as the stage's buckets let them through, or every admitted request at ${FUNCTION_WARM_MS} ms`,
  });
  const throttles = planThrottles(stage);
  for (const plan of PLAN_KEYS) {
    if (mix[plan] === 0) continue;
    const rate = (mix[plan] * limitsOf(plan, mix).perMinute) / 60;
    const t = throttles[plan];
    const capped = t.rateLimit < stageRate;
    row({
      hop: `Usage plan: ${PLANS[plan].displayName} (rate)`,
      capacity: t.rateLimit,
      // A capped plan is asked for its share of what the account admits: more is what the cap is there to refuse.
      demand: Math.ceil(Math.min(capped ? admitted * stage.freeShare : admitted, rate)),
      unit: 'req/s',
      ceiling: false,
      sources: flooders(t.rateLimit),
      whenFull: capped ? 'the gateway’s 429 to the plan’s keys; the paying plans are served' : throttled,
      note: capped
        ? `all ${mix[plan].toLocaleString('en-US')} keys together, capped at ${stage.freeShare} of the stage: the paying plans keep ${(stageRate - t.rateLimit).toLocaleString('en-US')} req/s whatever Free keys send`
        : `all ${mix[plan].toLocaleString('en-US')} keys together: the stage's whole share`,
    });
  }
  const exactItem = Math.min(LIMITER.exactPerMinute, largestKey);
  row({
    hop: 'Limiter: one counter item',
    capacity: PARTITION_WRITE_UNITS,
    demand: Math.ceil((exactItem + banThreshold({ perMinute: exactItem, perDay: exactItem })) / 60),
    unit: 'writes/s',
    ceiling: false,
    sources: 'per key: its own writes; refused writes are added up (1 a second per container)',
    whenFull: 'that key’s 503 with Retry-After; other keys are on other items',
    note: `an exact key's minute (${LIMITER.exactPerMinute.toLocaleString('en-US')} at most) and its fleet's 429s; larger keys take leases of ${LIMITER.leaseSeconds} s, at most ${LIMITER.leasesPerShardWindow} a shard a minute`,
  });
  row({
    hop: 'DynamoDB: tables’ maximum throughput',
    capacity: stage.tableMaxUnits,
    demand: Math.ceil(admitted * UNITS_PER_CALL),
    unit: 'units/s',
    ceiling: false,
    sources: flooders(stage.tableMaxUnits / UNITS_PER_CALL),
    whenFull: 'the function’s 503 with Retry-After',
    note: 'the stack’s on-demand cost ceiling on every table',
  });
  return rows;
}

/** The rows of our own hops below what the ceilings let through: each a guard of ours refusing a customer. */
export const shortfalls = (rows: readonly CapacityRow[]): CapacityRow[] =>
  rows.filter((r) => !r.ceiling && r.headroom < 1);

const figure = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const headroomText = (h: number) => (Number.isFinite(h) ? (h >= 100 ? '≥ 100' : h.toFixed(2)) : '∞');

/** The rows as a Markdown table (the docs' and `npm run capacity`'s). */
export function capacityTable(rows: readonly CapacityRow[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    line(['Hop', 'Capacity', 'Contract demand', 'Headroom', 'Sources that fill it', 'A customer then sees', 'Note']),
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      line([
        r.ceiling ? `**${r.hop}**` : r.hop,
        `${figure(r.capacity)} ${r.unit}`,
        `${figure(r.demand)} ${r.unit}`,
        r.ceiling && r.headroom < 1 ? `${headroomText(r.headroom)} (ask: ${r.raise})` : headroomText(r.headroom),
        r.sources,
        r.whenFull,
        r.note,
      ]),
    ),
  ].join('\n');
}

/**
 * Each plan's usage plan as `npm run capacity` and the docs print it: its keys' own limits (the functions' limiter),
 * the plan's bucket at the gateway, and what that bucket protects.
 */
export function usagePlanTable(
  stage: Pick<StageCapacity, 'stageThrottle' | 'freeShare' | 'accountQuotas' | 'accountShare'>,
): string {
  const t = planThrottles(stage);
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = PLAN_NAMES.map((plan) => {
    const limits = PLANS[plan].limits;
    const perKey = limits ? `${n(limits.perMinute)}/min, ${n(limits.perDay)}/day` : 'agreed per key';
    const protects =
      plan === 'free'
        ? `the paying plans: however many Free keys send, they keep ${n(t.pro.rateLimit - t.free.rateLimit)} req/s and ${n(t.pro.burstLimit - t.free.burstLimit)} at once`
        : 'nothing is held back from its keys: the stage’s whole share (each key’s contract is the limiter’s)';
    return `| ${PLANS[plan].displayName} | ${perKey} | ${n(t[plan].rateLimit)} req/s | ${n(t[plan].burstLimit)} | ${protects} |`;
  });
  return [
    '| Plan | Each key (limiter) | Usage plan rate | Usage plan burst | What it protects |',
    '|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}
