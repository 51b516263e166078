/**
 * A discrete-event model of the edge every request crosses, on a simulated clock and without HTTP, so floods of
 * 100,000 requests a second run in seconds: WAF (any evaluator of the template's web ACL), then the local gateway's
 * stage and account buckets (lib/local/stage-throttle.ts, before the authorizer), the TOKEN authorizer (its result
 * cached per token for the TTL, its reserved concurrency), the plans' usage plans (lib/local/usage-plans.ts, after
 * it) and the function's limiter (a key's minute, and its ban).
 *
 * Time moves in 1 ms steps. Requests of one step meet the buckets in the order they arrive: each source's requests
 * are spread evenly over the step and a customer's request comes after the flood's that arrived before it, so a
 * customer gets a token as often as a request of the flood would. A flood's requests of one step go through as one
 * count (a loop stops at the first refusal: a bucket refills only as time moves), and WAF judges each source once a
 * simulated second (its rate rules change their verdicts only at their checks, which fall on whole seconds).
 *
 * What it assumes (each an AWS behaviour as documented, or a figure of the capacity model):
 * - the authorizer's run takes `authorizerMs`; a request arriving while a token's result is being computed invokes it
 *   again (API Gateway does not coalesce them), and one past the reserved concurrency is AUTHORIZER_FAILURE;
 * - a token of a key's form costs one DynamoDB read when the authorizer runs for it (the key and its standing in one
 *   BatchGetItem); a token that fails the key's check costs none;
 * - a banned or spent key is a cached Deny (no usage plan counts it); the function's limiter admits a key's
 *   per-minute limit in each UTC minute and bans it as the limiter does (banThreshold, banSecondsFor), which the
 *   authorizer sees at its next run for that token.
 * Not modelled: the functions' concurrency, DynamoDB's throughput, cold starts.
 */
import { banSecondsFor, banThreshold, type PlanLimits } from '../../contract/plans.ts';
import { StageThrottle, methodKey } from '../../lib/local/stage-throttle.ts';
import type { ApiModel, MethodDef } from '../../lib/local/template.ts';
import { UsagePlanEnforcer } from '../../lib/local/usage-plans.ts';

export interface EdgeRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly sourceIp: string;
}

/** What WAF answers for `count` requests alike at `ms` (test/infra/waf-eval.ts WebAclSimulation). */
export interface EdgeWaf {
  evaluate(
    req: EdgeRequest,
    ms: number,
    traffic?: { readonly count?: number; readonly distinctHeaders?: readonly string[] },
  ): { readonly action: 'allow' | 'block'; readonly rule?: Record<string, any> };
}

export type KeyAuth = {
  readonly kind: 'keys';
  /** Each key's Authorization header; a source's requests go round its keys in turn. */
  readonly headers: readonly string[];
  /** The API key of its plan's usage plan, which the authorizer names. */
  readonly usageKey: string;
  readonly limits: PlanLimits;
  /** How the authorizer finds it: banned or spent keys are denied. @default good */
  readonly standing?: 'good' | 'banned' | 'spent';
};

/** A new token in every request, shaped like `sample`; `read`: whether the authorizer looks it up. */
export type ForgedAuth = { readonly kind: 'forged'; readonly sample: string; readonly read: boolean };

export type Sending =
  /** A key's contract: `perMinute` spread evenly over each minute; `burst`: that many at each minute's start. */
  | { readonly kind: 'contract'; readonly perMinute: number; readonly burst?: number }
  /** `perSecond` spread evenly from `fromMs` on, over all its addresses and keys. */
  | { readonly kind: 'flood'; readonly perSecond: number; readonly fromMs: number };

export interface Source {
  readonly name: string;
  /** An attacker's requests are the flood; everyone else is a customer whose refusals count. */
  readonly attacker?: boolean;
  readonly method: MethodDef;
  /** The request path as WAF sees it (the base path's included). */
  readonly path: string;
  /** Its addresses: requests go round them in turn (one source behind many addresses, or one NAT). */
  readonly addresses: readonly string[];
  readonly auth: KeyAuth | ForgedAuth;
  readonly send: Sending;
}

export const REFUSALS = [
  'waf',
  'throttled',
  'authorizerFailure',
  'unauthorized',
  'denied',
  'usagePlan',
  'limiter',
] as const;
export type Refusal = (typeof REFUSALS)[number];

/** Per source, counts by simulated second. */
export interface SourceTally {
  readonly sent: Float64Array;
  readonly served: Float64Array;
  readonly refused: Record<Refusal, Float64Array>;
}

export interface EdgeRun {
  readonly seconds: number;
  readonly tally: ReadonlyMap<string, SourceTally>;
  /** DynamoDB reads the authorizer made for attackers' tokens, and for customers', by second. */
  readonly attackerReads: Float64Array;
  readonly customerReads: Float64Array;
  /** When (ms) a rate-based rule first blocked an attacker's requests; undefined: never. */
  readonly detectedMs?: number;
}

export interface EdgeOptions {
  readonly model: ApiModel;
  readonly waf: EdgeWaf;
  readonly sources: readonly Source[];
  readonly seconds: number;
  /** How long one run of the authorizer holds an execution (ms). */
  readonly authorizerMs: number;
}

interface CacheEntry {
  readonly allow: boolean;
  /** From when the result is there (the run that computed it ends). */
  readonly readyAt: number;
  readonly expires: number;
}

interface KeyState {
  minute: number;
  used: number;
  rejected: number;
  bans: number;
  bannedUntil: number;
}

interface Live {
  readonly source: Source;
  readonly tally: SourceTally;
  /** One request object per address (or key) as WAF sees it, reused so its static verdicts are computed once. */
  readonly wafRequests: readonly EdgeRequest[];
  /** This second's WAF verdict per request object: passed or not. */
  readonly passing: boolean[];
  /** The share of them that passed. */
  share: number;
  /** Fraction of a flood's requests not yet accounted for (WAF blocks a share of its addresses). */
  carry: number;
  /** Where in their slots its requests fall (contract sources). */
  readonly phase: number;
  /** The next arrival index (contract sources). */
  next: number;
  /** Arrival times of this second (contract sources). */
  arrivals: number[];
}

const emptyTally = (seconds: number): SourceTally => ({
  sent: new Float64Array(seconds),
  served: new Float64Array(seconds),
  refused: Object.fromEntries(REFUSALS.map((r) => [r, new Float64Array(seconds)])) as Record<Refusal, Float64Array>,
});

/**
 * A contract source's i-th request time: its minute's burst at the minute's start, the rest evenly after, each at a
 * point of its slot spread by a low-discrepancy sequence (a fixed spot would fall at the same place in every
 * millisecond, before or after the flood's requests of it every time).
 */
function contractTime(send: Extract<Sending, { kind: 'contract' }>, i: number, phase: number): number {
  const burst = Math.min(send.burst ?? 0, send.perMinute);
  const minute = Math.floor(i / send.perMinute);
  const j = i % send.perMinute;
  // Mid-step: the flood's requests of that millisecond before it are as many as after.
  if (j < burst) return minute * 60_000 + 0.5;
  const spread = send.perMinute - burst;
  const u = (phase + i * GOLDEN) % 1;
  return minute * 60_000 + ((j - burst + u) * 60_000) / spread;
}
const GOLDEN = (Math.sqrt(5) - 1) / 2;

/** Requests a flood sends in [0, ms). */
const floodUpTo = (send: Extract<Sending, { kind: 'flood' }>, ms: number): number =>
  ms <= send.fromMs ? 0 : Math.floor(((ms - send.fromMs) * send.perSecond) / 1000);

export function runEdge(opts: EdgeOptions): EdgeRun {
  const { model, waf, seconds } = opts;
  const authorizers = [...model.authorizers.values()];
  if (authorizers.length !== 1) throw new Error(`expected one authorizer, found ${authorizers.length}`);
  const authorizer = authorizers[0]!;
  const reserved = model.functions.get(authorizer.functionId)?.reservedConcurrency ?? Infinity;
  const ttlMs = authorizer.ttlSeconds * 1000;
  const throttles = new StageThrottle(model.stageThrottle);
  const usage = new UsagePlanEnforcer(model);
  const cache = new Map<string, CacheEntry>();
  const keys = new Map<string, KeyState>();
  const attackerReads = new Float64Array(seconds);
  const customerReads = new Float64Array(seconds);
  let detectedMs: number | undefined;

  // The authorizer's executions in flight: runs started in the last `authorizerMs`, by ms.
  const span = Math.max(1, Math.ceil(opts.authorizerMs));
  const started = new Float64Array(span);
  const stamps = new Float64Array(span).fill(-Infinity);
  let inFlight = 0;
  /** Ends the runs started `authorizerMs` or more before `t`. */
  const runsAt = (t: number) => {
    for (let k = 0; k < span; k++)
      if (stamps[k]! <= t - span && started[k]! > 0) {
        inFlight -= started[k]!;
        started[k] = 0;
      }
    stamps[t % span] = t;
  };
  /** Starts up to `n` runs at `t`: how many got an execution. */
  const invoke = (t: number, n: number): number => {
    runsAt(t);
    const got = Math.max(0, Math.min(n, reserved - inFlight));
    started[t % span]! += got;
    inFlight += got;
    return got;
  };

  const live: Live[] = opts.sources.map((source, index) => {
    const { auth } = source;
    const perKey = auth.kind === 'keys' && auth.headers.length > 1;
    if (perKey && source.addresses.length > 1) throw new Error(`${source.name}: many keys or many addresses, not both`);
    if (perKey && source.send.kind === 'flood') throw new Error(`${source.name}: a flood sends with one key`);
    const header = (i: number) => (auth.kind === 'keys' ? auth.headers[i % auth.headers.length]! : auth.sample);
    // Forged tokens are each an aggregation key of their own, so one address stands for all alike.
    const n = perKey ? auth.headers.length : auth.kind === 'forged' ? 1 : source.addresses.length;
    const wafRequests = Array.from({ length: n }, (_, i) => ({
      method: source.method.httpMethod,
      path: source.path,
      headers: { Authorization: header(i) },
      sourceIp: source.addresses[i % source.addresses.length]!,
    }));
    return {
      source,
      tally: emptyTally(seconds),
      wafRequests,
      passing: wafRequests.map(() => true),
      share: 1,
      carry: 0,
      phase: (index * GOLDEN * GOLDEN) % 1,
      next: 0,
      arrivals: [],
    };
  });

  const keyState = (header: string): KeyState => {
    let k = keys.get(header);
    if (!k) keys.set(header, (k = { minute: -1, used: 0, rejected: 0, bans: 0, bannedUntil: -Infinity }));
    return k;
  };

  /** The function's limiter for `n` requests of one key at `t`: how many it serves; it bans as the limiter does. */
  const limiter = (auth: KeyAuth, header: string, t: number, n: number): number => {
    const k = keyState(header);
    const minute = Math.floor(t / 60_000);
    if (k.minute !== minute) Object.assign(k, { minute, used: 0, rejected: 0 });
    const served = Math.min(n, auth.limits.perMinute - k.used);
    k.used += served;
    k.rejected += n - served;
    if (k.rejected > banThreshold(auth.limits) && k.bannedUntil < t) {
      k.bans += 1;
      k.bannedUntil = t + banSecondsFor(k.bans) * 1000;
    }
    return served;
  };

  /** `n` requests of one source (one key, or forged tokens) that passed WAF, at `t`: the gateway's answers. */
  const gateway = (l: Live, header: string, t: number, n: number, exhausted: Set<string>): void => {
    const { source, tally } = l;
    const sec = Math.floor(t / 1000);
    const refuse = (why: Refusal, k: number) => {
      if (k > 0) tally.refused[why][sec]! += k;
    };
    // The stage's and the account's buckets, before the authorizer: a bucket refills only as time moves.
    const bucket = methodKey(source.method.httpMethod, source.method.resourcePath);
    let admitted = 0;
    while (admitted < n && !exhausted.has(bucket)) {
      if (throttles.admit(source.method, t) === 'ok') admitted += 1;
      else exhausted.add(bucket);
    }
    refuse('throttled', n - admitted);
    if (admitted === 0) return;
    const reads = source.attacker ? attackerReads : customerReads;
    const { auth } = source;
    if (auth.kind === 'forged') {
      const ran = invoke(t, admitted);
      if (auth.read) reads[sec]! += ran;
      refuse('authorizerFailure', admitted - ran);
      refuse('unauthorized', ran);
      return;
    }
    // One key: a cached result serves; a request before it is there runs the authorizer itself.
    let entry = cache.get(header);
    if (entry && entry.expires <= t) entry = undefined;
    let allowed = 0;
    let denied = 0;
    if (entry && entry.readyAt <= t) {
      if (entry.allow) allowed = admitted;
      else denied = admitted;
    } else {
      const ran = invoke(t, admitted);
      refuse('authorizerFailure', admitted - ran);
      if (ran > 0) {
        reads[sec]! += ran;
        const k = keyState(header);
        const allow = (auth.standing ?? 'good') === 'good' && k.bannedUntil <= t;
        if (!entry && ttlMs > 0)
          cache.set(header, { allow, readyAt: t + opts.authorizerMs, expires: t + opts.authorizerMs + ttlMs });
        if (allow) allowed = ran;
        else denied = ran;
      }
    }
    refuse('denied', denied);
    if (allowed === 0) return;
    let counted = 0;
    let verdict = 'ok';
    while (counted < allowed && verdict === 'ok') {
      verdict = usage.admit(auth.usageKey, t);
      if (verdict === 'ok') counted += 1;
    }
    refuse('usagePlan', allowed - counted);
    const served = limiter(auth, header, t, counted);
    refuse('limiter', counted - served);
    tally.served[sec]! += served;
  };

  /** WAF's verdicts for a source's requests of second `sec` (all of them counted at its start). */
  const judge = (l: Live, sec: number): void => {
    const { source } = l;
    const t = sec * 1000;
    let count: number;
    if (source.send.kind === 'contract') {
      l.arrivals = [];
      while (contractTime(source.send, l.next, l.phase) < t + 1000)
        l.arrivals.push(contractTime(source.send, l.next++, l.phase));
      count = l.arrivals.length;
    } else count = floodUpTo(source.send, t + 1000) - floodUpTo(source.send, t);
    l.tally.sent[sec] = count;
    if (count === 0) return;
    // Requests go round its addresses (or keys) in turn: each gets an equal share.
    const n = Math.max(source.addresses.length, source.auth.kind === 'keys' ? source.auth.headers.length : 1);
    const distinctHeaders = source.auth.kind === 'forged' ? ['authorization'] : undefined;
    l.wafRequests.forEach((req, i) => {
      const verdict = waf.evaluate(req, t, { count: count / n, distinctHeaders });
      l.passing[i] = verdict.action === 'allow';
      if (source.attacker && verdict.action === 'block' && verdict.rule?.Statement?.RateBasedStatement)
        detectedMs ??= t;
    });
    l.share = l.passing.filter(Boolean).length / l.passing.length;
  };

  const floods = live.filter((l) => l.source.send.kind === 'flood');
  const customers = live.filter((l) => l.source.send.kind === 'contract');
  for (let sec = 0; sec < seconds; sec++) {
    for (const l of live) judge(l, sec);
    const cursor = customers.map(() => 0);
    for (let t = sec * 1000; t < (sec + 1) * 1000; t++) {
      const exhausted = new Set<string>();
      // This step's flood requests, spread evenly over it, and how many of each went through so far.
      const due = floods.map((l) => {
        const send = l.source.send as Extract<Sending, { kind: 'flood' }>;
        return floodUpTo(send, t + 1) - floodUpTo(send, t);
      });
      const done = floods.map(() => 0);
      const floodUntil = (position: number) =>
        floods.forEach((l, i) => {
          const upTo = Math.min(due[i]!, Math.max(0, Math.ceil(position * due[i]! - 0.5)));
          const k = upTo - done[i]!;
          if (k <= 0) return;
          done[i] = upTo;
          // WAF blocks the share of the flood's addresses it blocks; the rest goes on as one count.
          const exact = k * l.share + l.carry;
          const passed = Math.floor(exact + 1e-9);
          l.carry = exact - passed;
          if (k - passed > 0) l.tally.refused.waf[sec]! += k - passed;
          if (passed > 0) gateway(l, floodHeader(l), t, passed, exhausted);
        });
      const arrivals: { at: number; l: Live; index: number }[] = [];
      customers.forEach((l, c) => {
        while (cursor[c]! < l.arrivals.length && l.arrivals[cursor[c]!]! < t + 1) {
          arrivals.push({ at: l.arrivals[cursor[c]!]!, l, index: l.next - l.arrivals.length + cursor[c]! });
          cursor[c]! += 1;
        }
      });
      arrivals.sort((a, b) => a.at - b.at);
      for (const a of arrivals) {
        floodUntil(a.at - t);
        const i = a.index % a.l.wafRequests.length;
        if (!a.l.passing[i]) a.l.tally.refused.waf[sec]! += 1;
        else gateway(a.l, a.l.wafRequests[i]!.headers.Authorization!, t, 1, exhausted);
      }
      floodUntil(1);
    }
  }

  return {
    seconds,
    tally: new Map(live.map((l) => [l.source.name, l.tally])),
    attackerReads,
    customerReads,
    ...(detectedMs === undefined ? {} : { detectedMs }),
  };
}

const floodHeader = (l: Live): string =>
  l.source.auth.kind === 'keys' ? l.source.auth.headers[0]! : l.source.auth.sample;

/** A source's requests and refusals over seconds [from, to). */
export function totals(
  run: EdgeRun,
  name: string,
  from = 0,
  to = run.seconds,
): { sent: number; served: number; refused: number; by: Record<Refusal, number> } {
  const t = run.tally.get(name);
  if (!t) throw new Error(`no source ${name}`);
  const sum = (a: Float64Array) => a.slice(Math.max(0, from), Math.min(to, run.seconds)).reduce((x, y) => x + y, 0);
  const by = Object.fromEntries(REFUSALS.map((r) => [r, sum(t.refused[r])])) as Record<Refusal, number>;
  return { sent: sum(t.sent), served: sum(t.served), refused: REFUSALS.reduce((s, r) => s + by[r], 0), by };
}
