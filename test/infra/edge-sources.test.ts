/**
 * No single machine, key or stage can take the account: the synthesized template's WAF rules (waf-eval.ts, rate
 * rules over simulated time) and the local gateway's buckets (test/helpers/edge-sim.ts) played against floods, with
 * customers of every plan sending inside their contracts beside them, on the flooded method and on another one.
 * Every figure comes from the template (WAF's limits, the stage's and the usage plans' buckets, the authorizer's TTL
 * and reservation) or the contract (plans, KEY_BURST). WAF needs up to one re-estimate (about 30 s) to see a source
 * over its limit: until then a flood spends the buckets it reaches, and the test prints what customers saw in that
 * time and what the flood cost in DynamoDB reads; from WAF's first block on (and the buckets' refill, under a second),
 * every customer gets its whole contract, and customers of another method get theirs throughout. On both stages'
 * templates.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../contract/routes.ts';
import {
  ACCOUNT_THROTTLE,
  KEY_BURST,
  PLANS,
  PLAN_NAMES,
  planUsageKeyValue,
  type PlanLimits,
  type PlanName,
} from '../../contract/plans.ts';
import { AUTHORIZER_WARM_MS, REFERENCE_MIX } from '../../lib/config/capacity.ts';
import { STAGES, type StageName } from '../../lib/config/stages.ts';
import { apiModel, type MethodDef } from '../../lib/local/template.ts';
import { generateKey, keyForm } from '../../lambdas/domain/keys.ts';
import { runEdge, totals, type EdgeRun, type EdgeWaf, type Source } from '../helpers/edge-sim.ts';
import { sharedTemplateJson } from './shared-synth.ts';
import { RATE_CHECK_INTERVAL_MS, WebAclSimulation, firstMatch, inCidr, type WafRequest } from './waf-eval.ts';

describe('the WAF evaluator on a hand-made web ACL', () => {
  const listed = '203.0.113.0/24';
  const authorization = (s: Record<string, any>) => ({ Header: { Name: 'Authorization', ...s } });
  const acl = {
    Rules: [
      {
        Name: 'Listed',
        Priority: 0,
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: 1_000,
            AggregateKeyType: 'IP',
            EvaluationWindowSec: 60,
            ScopeDownStatement: { IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': ['Egress', 'Arn'] } } },
          },
        },
      },
      {
        Name: 'PerIp',
        Priority: 1,
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: 100,
            AggregateKeyType: 'IP',
            EvaluationWindowSec: 60,
            ScopeDownStatement: {
              NotStatement: { Statement: { IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': ['Egress', 'Arn'] } } } },
            },
          },
        },
      },
      {
        Name: 'PerKey',
        Priority: 2,
        Action: { Block: {} },
        Statement: {
          RateBasedStatement: {
            Limit: 50,
            AggregateKeyType: 'CUSTOM_KEYS',
            EvaluationWindowSec: 60,
            CustomKeys: [authorization({ TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] })],
          },
        },
      },
      {
        Name: 'NoKey',
        Priority: 3,
        Action: { Block: { CustomResponse: { ResponseCode: 401 } } },
        Statement: {
          NotStatement: {
            Statement: {
              RegexMatchStatement: {
                FieldToMatch: { SingleHeader: { Name: 'authorization' } },
                RegexString: '^Bearer k',
                TextTransformations: [{ Priority: 0, Type: 'NONE' }],
              },
            },
          },
        },
      },
    ],
  };
  const template = {
    Resources: {
      Acl: { Type: 'AWS::WAFv2::WebACL', Properties: acl },
      Egress: { Type: 'AWS::WAFv2::IPSet', Properties: { Addresses: [listed] } },
    },
  };
  const req = (sourceIp: string, key: string): WafRequest => ({
    method: 'GET',
    path: '/',
    sourceIp,
    headers: { Authorization: key },
  });
  const verdict = (waf: WebAclSimulation, r: WafRequest, ms: number, count = 1) => {
    const v = waf.evaluate(r, ms, { count });
    return v.action === 'allow' ? 'allow' : `${v.rule!.Name} ${v.status}`;
  };

  it('matches addresses against CIDR blocks', () => {
    expect(inCidr('203.0.113.7', listed)).toBe(true);
    expect(inCidr('203.0.114.7', listed)).toBe(false);
    expect(inCidr('198.51.100.1', '198.51.100.1/32')).toBe(true);
    expect(inCidr('198.51.100.2', '198.51.100.1/32')).toBe(false);
    expect(inCidr('8.8.8.8', '0.0.0.0/0')).toBe(true);
  });

  it('blocks a source from the first check that sees it over its limit until a check sees it at or under', () => {
    const waf = WebAclSimulation.fromTemplate(template);
    const src = req('198.51.100.1', 'Bearer k1');
    // 101 in the window: still allowed until the check at 30 s.
    expect(verdict(waf, src, 1_000, 101)).toBe('allow');
    expect(verdict(waf, src, 29_999)).toBe('allow');
    expect(verdict(waf, src, RATE_CHECK_INTERVAL_MS)).toBe('PerIp 403');
    expect(waf.firstBlocked('PerIp', 'ip:198.51.100.1')).toBe(RATE_CHECK_INTERVAL_MS);
    // Blocked requests count: a source that keeps sending stays blocked.
    expect(verdict(waf, src, 59_000, 200)).toBe('PerIp 403');
    expect(verdict(waf, src, 60_000)).toBe('PerIp 403');
    expect(verdict(waf, src, 89_999)).toBe('PerIp 403');
    // The check at 120 s sees the window (60 s) empty of it.
    expect(verdict(waf, src, 120_000)).toBe('allow');
  });

  it('a request an earlier rule blocked is not counted by a later one; one under every limit goes on to the next rule', () => {
    const waf = WebAclSimulation.fromTemplate(template, { firstCheckMs: 10_000 });
    const src = req('198.51.100.2', 'Bearer k2');
    expect(verdict(waf, src, 0, 101)).toBe('allow');
    // At 10 s the address is over PerIp's limit and its key over PerKey's: the address's rule comes first.
    expect(verdict(waf, src, 10_000)).toBe('PerIp 403');
    expect(verdict(waf, req('198.51.100.3', 'Bearer k2'), 10_000)).toBe('PerKey 403');
    // What PerIp blocks never reaches PerKey: a key sent only from the blocked address is not counted.
    expect(verdict(waf, req('198.51.100.2', 'Bearer k9'), 11_000, 1_000)).toBe('PerIp 403');
    expect(verdict(waf, req('198.51.100.3', 'Bearer k9'), 40_000)).toBe('allow');
    // Under every rate limit, a token of no key form gets the later rule's 401.
    expect(verdict(waf, req('198.51.100.4', 'Basic x'), 40_000)).toBe('NoKey 401');
  });

  it('reads the key header lower-cased, skips requests without it, and never blocks distinct tokens', () => {
    const waf = WebAclSimulation.fromTemplate(template);
    const spread = (i: number) => `198.51.100.${10 + i}`;
    for (let i = 0; i < 40; i++) verdict(waf, req(spread(i), i % 2 ? 'Bearer K3' : 'bearer k3'), 1_000, 2);
    expect(verdict(waf, req(spread(50), 'BEARER k3'), RATE_CHECK_INTERVAL_MS)).toBe('PerKey 403');
    const bare: WafRequest = { method: 'GET', path: '/', sourceIp: spread(51) };
    expect(waf.keyOf('PerKey', bare)).toBeUndefined();
    const forged = req(spread(52), 'Bearer kforged');
    waf.evaluate(forged, 31_000, { count: 90, distinctHeaders: ['authorization'] });
    expect(waf.evaluate(forged, 2 * RATE_CHECK_INTERVAL_MS, { distinctHeaders: ['authorization'] }).action).toBe(
      'allow',
    );
  });

  it('counts a listed address by its own rule and limit, not the others', () => {
    const waf = WebAclSimulation.fromTemplate(template);
    const nat = (key: number) => req('203.0.113.7', `Bearer k${key}`);
    for (let key = 0; key < 30; key++) verdict(waf, nat(key), 1_000, 30);
    expect(verdict(waf, nat(0), RATE_CHECK_INTERVAL_MS)).toBe('allow');
    verdict(waf, nat(0), 31_000, 200);
    expect(verdict(waf, nat(1), 2 * RATE_CHECK_INTERVAL_MS)).toBe('Listed 403');
  });

  it('firstMatch judges the rules that need no traffic', () => {
    expect(firstMatch(acl, req('198.51.100.1', 'Basic x'))?.Name).toBe('NoKey');
    expect(firstMatch(acl, req('198.51.100.1', 'Bearer k'))).toBeUndefined();
  });
});

/** Customers' and attackers' addresses: documentation ranges (RFC 5737), listed ones in TEST-NET-3. */
const customerIp = (i: number) => `192.0.2.${i}`;
const listedIp = (i: number) => `203.0.113.${i}`;
const attackerIps = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `198.51.${100 + Math.floor((from + i) / 250)}.${1 + ((from + i) % 250)}`);

/** The flood starts 1 s after a rate check, so WAF's next check is as late as it can be. */
const FLOOD_FROM_MS = 2 * RATE_CHECK_INTERVAL_MS + 1_000;
const FLOOD_FROM_S = FLOOD_FROM_MS / 1000;
const SECONDS = 240;
/** A customer behind one listed address: its keys, each sending this much a minute. */
const FLEET = { keys: 30, perMinute: 3_000 };
/** A plan's limits; Enterprise's, agreed per customer: the capacity model's reference mix's. */
const limitsOf = (plan: PlanName): PlanLimits => PLANS[plan].limits ?? REFERENCE_MIX.enterpriseLimits;

const wafPath = (m: MethodDef) => `${BASE_PATH}${m.resourcePath.replace(/\{[^}]+\}/g, 'p-1')}`;
const bearer = () => `Bearer ${generateKey()}`;
const sum = (a: Float64Array, from: number, to: number) => a.slice(from, to).reduce((x, y) => x + y, 0);

/** A stage's template with customers of every plan on two methods, and what floods them. */
function world(stage: StageName) {
  const t = sharedTemplateJson(stage);
  const resources = Object.values(t.Resources as Record<string, any>);
  const model = apiModel(t);
  const methods = model.methods.filter((m) => m.kind === 'lambda' && m.authorizerId);
  expect(methods.length).toBeGreaterThanOrEqual(2);
  const [flooded, other] = methods as [MethodDef, MethodDef];
  const acl = resources.find((r) => r.Type === 'AWS::WAFv2::WebACL')!;
  const rated = (acl.Properties.Rules as any[]).map((r) => r.Statement.RateBasedStatement).filter(Boolean);
  const scope = (r: any) => (r.ScopeDownStatement?.NotStatement ? 'unlisted' : r.ScopeDownStatement ? 'listed' : '');
  const limits = {
    perIp: rated.find((r) => r.AggregateKeyType === 'IP' && scope(r) === 'unlisted')?.Limit as number,
    perKey: rated.find((r) => r.AggregateKeyType === 'CUSTOM_KEYS')?.Limit as number,
    listed: rated.find((r) => r.AggregateKeyType === 'IP' && scope(r) === 'listed')?.Limit as number,
  };
  expect(limits, 'WAF rate rules per address, per key and per listed address').toEqual({
    perIp: expect.any(Number),
    perKey: expect.any(Number),
    listed: expect.any(Number),
  });
  const [authorizer] = [...model.authorizers.values()];
  const oldForm = model.functions.get(authorizer!.functionId)!.environment.OLD_KEY_FORM === 'refused';
  /** Whether the authorizer looks a token up (one read) rather than refusing it on its form. */
  const costsRead = (header: string) =>
    keyForm(header.replace(/^Bearer /, ''), oldForm ? 'refused' : 'accepted') !== 'forged';
  const usageKey = (plan: PlanName) => {
    const v = planUsageKeyValue(STAGES[stage].name, plan);
    expect(model.usagePlanKeys?.has(v), `${plan}'s usage key`).toBe(true);
    return v;
  };
  /**
   * How long the buckets a flood emptied take to fill again once WAF blocks it (the slowest: burst / rate), in whole
   * seconds: a customer's burst in that time finds them still filling.
   */
  const stageBucket = model.stageThrottle!.default!;
  const refill = Math.ceil(
    Math.max(
      stageBucket.burstLimit / stageBucket.rateLimit,
      ACCOUNT_THROTTLE.burstLimit / ACCOUNT_THROTTLE.rateLimit,
      ...[...model.usagePlans.values()].map((p) => (p.burstLimit ?? 0) / (p.rateLimit ?? Infinity)),
    ),
  );

  const customers: Source[] = [];
  const listedAddresses: string[] = [];
  let n = 10;
  const customer = (name: string, method: MethodDef, plan: PlanName, extra: Partial<Source> = {}): Source => {
    const l = limitsOf(plan);
    // A customer whose one address sends more than WAF lets an unlisted address send lists it (customerEgress).
    const listed = l.perMinute * 5 > limits.perIp;
    const ip = listed ? listedIp(n++) : customerIp(n++);
    if (listed) listedAddresses.push(`${ip}/32`);
    return {
      name,
      method,
      path: wafPath(method),
      addresses: [ip],
      auth: { kind: 'keys', headers: [bearer()], usageKey: usageKey(plan), limits: l },
      send: { kind: 'contract', perMinute: l.perMinute },
      ...extra,
    };
  };
  for (const [where, method] of [
    ['flooded', flooded],
    ['other', other],
  ] as const)
    for (const plan of PLAN_NAMES) customers.push(customer(`${plan} on ${where}`, method, plan));
  customers.push(
    customer(`business bursting ${KEY_BURST} on flooded`, flooded, 'business', {
      send: { kind: 'contract', perMinute: limitsOf('business').perMinute, burst: KEY_BURST },
    }),
  );
  const fleetIp = listedIp(n++);
  listedAddresses.push(`${fleetIp}/32`);
  customers.push({
    name: `enterprise fleet: ${FLEET.keys} keys behind 1 listed address, on flooded`,
    method: flooded,
    path: wafPath(flooded),
    addresses: [fleetIp],
    auth: {
      kind: 'keys',
      headers: Array.from({ length: FLEET.keys }, bearer),
      usageKey: usageKey('enterprise'),
      limits: { perMinute: FLEET.perMinute, perDay: FLEET.perMinute * 1_440 },
    },
    send: { kind: 'contract', perMinute: FLEET.keys * FLEET.perMinute },
  });
  // The admin lists the customers' egress addresses (context customerEgress), which the template carries.
  const ipSets = resources.filter((r) => r.Type === 'AWS::WAFv2::IPSet');
  expect(ipSets).toHaveLength(1);
  ipSets[0].Properties.Addresses = listedAddresses;

  const forged = (
    name: string,
    header: string,
    perSecond: number,
    ips: number,
    method = flooded,
    from = 0,
  ): Source => ({
    name,
    attacker: true,
    method,
    path: wafPath(method),
    addresses: attackerIps(ips, from),
    auth: { kind: 'forged', sample: header, read: costsRead(header) },
    send: { kind: 'flood', perSecond, fromMs: FLOOD_FROM_MS },
  });
  const keyed = (name: string, standing: 'good' | 'banned' | 'spent', perSecond: number, ips: number): Source => ({
    name,
    attacker: true,
    method: flooded,
    path: wafPath(flooded),
    addresses: attackerIps(ips),
    auth: { kind: 'keys', headers: [bearer()], usageKey: usageKey('free'), limits: limitsOf('free'), standing },
    send: { kind: 'flood', perSecond, fromMs: FLOOD_FROM_MS },
  });
  /** `waf`: the template's (the listed addresses as above), or one without them, or none (every request passes). */
  const run = (attackers: Source[], waf: 'template' | 'unlisted' | 'none' = 'template'): EdgeRun => {
    let acl: EdgeWaf = { evaluate: () => ({ action: 'allow' }) };
    if (waf !== 'none') {
      const copy = structuredClone(t);
      if (waf === 'unlisted')
        for (const r of Object.values(copy.Resources as Record<string, any>))
          if (r.Type === 'AWS::WAFv2::IPSet') r.Properties.Addresses = [];
      acl = WebAclSimulation.fromTemplate(copy);
    }
    return runEdge({
      model,
      waf: acl,
      sources: [...customers, ...attackers],
      seconds: SECONDS,
      authorizerMs: AUTHORIZER_WARM_MS,
    });
  };
  return {
    model,
    methods,
    flooded,
    other,
    limits,
    customers,
    costsRead,
    refill,
    forged,
    keyed,
    run,
    fleet: customers.at(-1)!,
  };
}

interface Row {
  scenario: string;
  'WAF blocks after (s)': number | string;
  'refused meanwhile, flooded method': string;
  'other method': string;
  'refused after': number;
  'flood reads/s before': number;
  after: number;
}

describe.each(['staging', 'production'] as const)(
  '%s: every source is bounded at the edge (WAF, buckets, authorizer, usage plans)',
  (stage) => {
    let w: ReturnType<typeof world>;
    let alone: EdgeRun;
    const rows: Row[] = [];
    beforeAll(() => {
      w = world(stage);
      alone = w.run([]);
    }, 240_000);

    /** Customers' requests and refusals in seconds [from, to) on one method. */
    const refusals = (r: EdgeRun, method: MethodDef, from: number, to: number) =>
      w.customers
        .filter((c) => c.method === method)
        .map((c) => totals(r, c.name, from, to))
        .reduce((a, x) => ({ sent: a.sent + x.sent, refused: a.refused + x.refused }), { sent: 0, refused: 0 });

    /**
     * One row of the figures: until WAF's first block and the buckets' refill, what customers on the flooded and the
     * other method were refused; after, refusals they would not get alone; the flood's DynamoDB reads per second.
     */
    function report(scenario: string, r: EdgeRun): number {
      const blocked = r.detectedMs === undefined ? SECONDS : r.detectedMs / 1000;
      const settled = Math.min(SECONDS, blocked + w.refill);
      const pct = (x: { sent: number; refused: number }) =>
        `${Math.round(x.refused)}/${Math.round(x.sent)} (${x.sent ? ((100 * x.refused) / x.sent).toFixed(1) : '0'}%)`;
      const extra = w.customers.reduce(
        (a, c) => a + totals(r, c.name, settled, SECONDS).refused - totals(alone, c.name, settled, SECONDS).refused,
        0,
      );
      const reads = (from: number, to: number) =>
        to > from ? Math.round(sum(r.attackerReads, from, to) / (to - from)) : 0;
      rows.push({
        scenario,
        'WAF blocks after (s)': r.detectedMs === undefined ? 'never' : blocked - FLOOD_FROM_S,
        'refused meanwhile, flooded method': pct(refusals(r, w.flooded, FLOOD_FROM_S, settled)),
        'other method': pct(refusals(r, w.other, FLOOD_FROM_S, settled)),
        'refused after': extra,
        'flood reads/s before': reads(FLOOD_FROM_S, blocked),
        after: reads(blocked, SECONDS),
      });
      return settled;
    }

    it('alone, every customer (each plan, a burst, a listed fleet) gets its whole contract', () => {
      for (const c of w.customers) {
        const t = totals(alone, c.name);
        expect(t.sent, c.name).toBeGreaterThan(0);
        expect(t.refused, `${c.name}: ${JSON.stringify(t.by)}`).toBe(0);
      }
    });

    /**
     * From WAF's first block (and the buckets' refill) on, every customer gets what it gets alone, and the flood costs
     * no read; customers of the other method are served throughout; no customer is ever blocked by WAF.
     */
    function expectContracts(scenario: string, r: EdgeRun) {
      const settled = report(scenario, r);
      expect(r.detectedMs, `${scenario}: WAF blocks the flood`).toBeDefined();
      for (const c of w.customers) {
        const all = totals(r, c.name);
        expect(totals(r, c.name, settled, SECONDS).refused, `${scenario}: ${c.name} once WAF blocks`).toBe(0);
        if (c.method === w.other) expect(all.refused, `${scenario}: ${c.name}`).toBe(0);
        expect(all.by.waf, `${scenario}: ${c.name} blocked by WAF`).toBe(0);
      }
      expect(sum(r.attackerReads, settled, SECONDS), `${scenario}: the flood's reads once blocked`).toBe(0);
    }

    it('a customer behind one listed address sending 30 keys’ contracts is never blocked; unlisted, it would be', () => {
      const fleet = w.fleet.name;
      expect(totals(alone, fleet).by.waf).toBe(0);
      expect(totals(w.run([], 'unlisted'), fleet).by.waf).toBeGreaterThan(0);
    });

    // What the test would see if WAF did not bound sources: the flood holds the method for as long as it lasts.
    it('without WAF, one address’s forged tokens keep the flooded method’s customers refused', () => {
      const r = w.run([w.forged('forged', bearer(), 10_000, 1)], 'none');
      expect(refusals(r, w.flooded, SECONDS - 60, SECONDS).refused).toBeGreaterThan(0);
      expect(sum(r.attackerReads, SECONDS - 60, SECONDS)).toBeGreaterThan(0);
    });

    for (const perSecond of [10_000, 100_000])
      it(`one address sending distinct forged tokens of a key's form at ${perSecond}/s`, () => {
        expectContracts(`1 address, forged, ${perSecond}/s`, w.run([w.forged('forged', bearer(), perSecond, 1)]));
      });

    it('one address sending tokens that fail the key check (no read), or of no key form (WAF’s 401)', () => {
      const key = generateKey();
      const badCheck = `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
      expect(w.costsRead(badCheck)).toBe(false);
      expectContracts('1 address, bad check, 10000/s', w.run([w.forged('bad check', badCheck, 10_000, 1)]));
      const r = w.run([w.forged('no form', `Bearer ${'x'.repeat(40)}`, 10_000, 1)]);
      report('1 address, no key form, 10000/s', r);
      // WAF answers every one itself: nothing reaches the gateway.
      expect(totals(r, 'no form').by.waf).toBe(totals(r, 'no form').sent);
      for (const c of w.customers) expect(totals(r, c.name).refused, c.name).toBe(0);
    });

    for (const perSecond of [10_000, 100_000])
      it(`30 addresses sending distinct forged tokens at ${perSecond}/s together`, () => {
        expectContracts(`30 addresses, forged, ${perSecond}/s`, w.run([w.forged('forged', bearer(), perSecond, 30)]));
      });

    for (const ips of [1, 30])
      for (const standing of ['banned', 'spent', 'good'] as const)
        it(`a ${standing === 'good' ? 'Free' : standing} key at 10000/s from ${ips} address(es)`, () => {
          const name = `${standing === 'good' ? 'Free' : standing} key`;
          expectContracts(`${name}, ${ips} address(es), 10000/s`, w.run([w.keyed(name, standing, 10_000, ips)]));
        });

    it('floods WAF never blocks (addresses each under its limit) on every method but one leave that one served', () => {
      const perAddress = (0.9 * w.limits.perIp) / 300;
      const ips = Math.ceil(10_000 / perAddress);
      const floods = w.methods
        .filter((m) => m !== w.other)
        .map((m, i) => w.forged(`spread ${i}`, bearer(), ips * perAddress, ips, m, i * ips));
      const r = w.run(floods);
      report(
        `${ips} addresses under WAF's limit on each of ${floods.length} methods, forged, ${Math.round(ips * perAddress)}/s each`,
        r,
      );
      expect(r.detectedMs).toBeUndefined();
      for (const c of w.customers.filter((x) => x.method === w.other))
        expect(totals(r, c.name).refused, c.name).toBe(0);
      // Each method's bucket bounds what a flood on it costs: at most its rate in authorizer runs and reads.
      const rate = w.model.stageThrottle!.default!.rateLimit;
      expect(Math.max(...r.attackerReads.slice(FLOOD_FROM_S + 1))).toBeLessThanOrEqual(rate * floods.length);
    });

    it('prints the figures', () => {
      console.log(
        `${stage}: WAF per 5 min: ${w.limits.perIp} per address, ${w.limits.perKey} per key, ${w.limits.listed} per listed address; ` +
          `flood from ${FLOOD_FROM_S} s, rate checks every ${RATE_CHECK_INTERVAL_MS / 1000} s from 0; buckets refill in ${w.refill} s`,
      );
      console.table(rows);
    });
  },
);
