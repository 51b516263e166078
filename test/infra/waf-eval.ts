/**
 * A web ACL's rules applied to requests, for the statements the stack uses (AND, OR, NOT, byte match, regex match,
 * size constraint on a method, URI path, single header or body, IP set reference, rate-based), as AWS WAF documents
 * them: header names are case-insensitive, a statement on a header the request lacks does not match, a body over the
 * inspection limit is "oversize" and handled as its rule says.
 *
 * `firstMatch` judges one request by the rules that need no traffic (a rate-based statement never matches there).
 * `WebAclSimulation` plays the whole ACL over simulated time, rate-based rules included, as AWS documents them
 * ("Rate-based rule caveats", "Rate-based rule statement"):
 * - rules run in priority order and WAF stops at the first terminating action (Block, Allow); Count goes on;
 * - a rate-based rule counts each request its scope-down matches under its aggregation key (a request missing a
 *   part of the key is not counted, and not matched), blocked ones included, so a source that keeps sending stays
 *   blocked; a request an earlier rule blocked never reaches it and is not counted;
 * - about every 30 s WAF re-estimates each key's count over the rule's window: a key over the limit is blocked from
 *   that check on, until a check finds it at or under the limit. A rate rule that blocks nothing lets evaluation go on.
 * Modelled plainly: the count is an exact sum over the window in 1 s bins (AWS weighs recent requests more: "near the
 * limit"), every rule is checked at the same instants, and a check's verdict applies at once (no propagation delay).
 */
import { referencedId } from '../../lib/local/template.ts';

export interface WafRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The client's address as WAF sees it (the connection's): what IP sets and IP-keyed rate rules read. */
  readonly sourceIp?: string;
}

type Statement = Record<string, any>;
type Rule = Record<string, any>;

/** The addresses (IPv4 CIDR) of each IP set an ACL references, by its logical id or its ARN. */
export type IpSets = ReadonlyMap<string, readonly string[]>;

/** What WAF inspects of a regional resource's body (API Gateway's default). */
const BODY_INSPECTION_BYTES = 8 * 1024;

/** AWS: "AWS WAF checks the rate of requests every 30 seconds" (about: "usually, this delay is below 30 seconds"). */
export const RATE_CHECK_INTERVAL_MS = 30_000;

function transform(value: string, transformations: readonly { Type: string }[] | undefined): string {
  let v = value;
  for (const t of [...(transformations ?? [])].sort((a: any, b: any) => a.Priority - b.Priority)) {
    if (t.Type === 'LOWERCASE') v = v.toLowerCase();
    else if (t.Type !== 'NONE') throw new Error(`text transformation not modelled: ${t.Type}`);
  }
  return v;
}

function headerOf(req: WafRequest, name: string): string | undefined {
  const lower = name.toLowerCase();
  const hit = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === lower);
  return hit?.[1];
}

function field(f: Record<string, any>, req: WafRequest): { value?: string; oversize?: boolean } {
  if (f.Method) return { value: req.method };
  if (f.UriPath) return { value: req.path };
  if (f.SingleHeader) {
    const value = headerOf(req, String(f.SingleHeader.Name));
    return value === undefined ? {} : { value };
  }
  if (f.Body) {
    if (req.body === undefined) return {};
    return { value: req.body, oversize: Buffer.byteLength(req.body) > BODY_INSPECTION_BYTES };
  }
  throw new Error(`field not modelled: ${JSON.stringify(f)}`);
}

const ipv4 = (address: string): number => {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not an IPv4 address: ${address}`);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
};

/** Whether an IPv4 address is in a CIDR block (`203.0.113.7/32`, `198.51.100.0/24`). */
export function inCidr(address: string, cidr: string): boolean {
  const [base, bits = '32'] = cidr.split('/');
  const n = Number(bits);
  const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
  return (ipv4(address) & mask) >>> 0 === (ipv4(base!) & mask) >>> 0;
}

function ipSetAddresses(ref: unknown, ipSets: IpSets | undefined): readonly string[] {
  const id = typeof ref === 'string' ? ref : referencedId(ref, 'Arn');
  const addresses = id === undefined ? undefined : ipSets?.get(id);
  if (!addresses) throw new Error(`IP set not found: ${JSON.stringify(ref)}`);
  return addresses;
}

/** Whether a statement that needs no traffic matches; rate-based statements never do here. */
function matches(s: Statement, req: WafRequest, ipSets?: IpSets): boolean {
  if (s.AndStatement) return s.AndStatement.Statements.every((x: Statement) => matches(x, req, ipSets));
  if (s.OrStatement) return s.OrStatement.Statements.some((x: Statement) => matches(x, req, ipSets));
  if (s.NotStatement) return !matches(s.NotStatement.Statement, req, ipSets);
  if (s.ByteMatchStatement) {
    const { value } = field(s.ByteMatchStatement.FieldToMatch, req);
    if (value === undefined) return false;
    const v = transform(value, s.ByteMatchStatement.TextTransformations);
    const search = String(s.ByteMatchStatement.SearchString);
    switch (s.ByteMatchStatement.PositionalConstraint) {
      case 'EXACTLY':
        return v === search;
      case 'CONTAINS':
        return v.includes(search);
      case 'STARTS_WITH':
        return v.startsWith(search);
      default:
        throw new Error(`positional constraint not modelled: ${s.ByteMatchStatement.PositionalConstraint}`);
    }
  }
  if (s.RegexMatchStatement) {
    const { value } = field(s.RegexMatchStatement.FieldToMatch, req);
    return (
      value !== undefined &&
      new RegExp(s.RegexMatchStatement.RegexString).test(transform(value, s.RegexMatchStatement.TextTransformations))
    );
  }
  if (s.SizeConstraintStatement) {
    const f = s.SizeConstraintStatement.FieldToMatch;
    const { value, oversize } = field(f, req);
    if (value === undefined) return false;
    if (oversize) {
      const handling = f.Body?.OversizeHandling ?? 'CONTINUE';
      if (handling !== 'CONTINUE') return handling === 'MATCH';
    }
    const size = Buffer.byteLength(value);
    const n = Number(s.SizeConstraintStatement.Size);
    const op = s.SizeConstraintStatement.ComparisonOperator;
    return { GT: size > n, GE: size >= n, LT: size < n, LE: size <= n, EQ: size === n, NE: size !== n }[op as 'GT']!;
  }
  if (s.IPSetReferenceStatement) {
    if (s.IPSetReferenceStatement.IPSetForwardedIPConfig) throw new Error('forwarded IP not modelled');
    if (req.sourceIp === undefined) throw new Error('an IP set reference needs the request’s sourceIp');
    return ipSetAddresses(s.IPSetReferenceStatement.Arn, ipSets).some((cidr) => inCidr(req.sourceIp!, cidr));
  }
  if (s.RateBasedStatement) return false;
  // AWS's lists of addresses (IP reputation): no test address is on them.
  if (s.ManagedRuleGroupStatement) return false;
  throw new Error(`statement not modelled: ${Object.keys(s).join(',')}`);
}

const byPriority = (acl: Record<string, any>): Rule[] =>
  [...(acl.Rules as Rule[])].sort((a, b) => a.Priority - b.Priority);

/** The first non-rate rule (by priority) that matches, or undefined (the default action). */
export function firstMatch(acl: Record<string, any>, req: WafRequest, ipSets?: IpSets): Rule | undefined {
  return byPriority(acl).find((r) => matches(r.Statement, req, ipSets));
}

/** The IP sets of a template, by logical id: what an ACL's `Fn::GetAtt [id, Arn]` resolves to. */
export function ipSetsOf(template: {
  Resources: Record<string, { Type: string; Properties?: any }>;
}): Map<string, string[]> {
  return new Map(
    Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::WAFv2::IPSet')
      .map(([id, r]) => [id, [...(r.Properties?.Addresses ?? [])] as string[]]),
  );
}

export interface WafVerdict {
  readonly action: 'allow' | 'block';
  /** The rule that ended evaluation; undefined: the default action. */
  readonly rule?: Rule;
  /** A block's status: its custom response's, else WAF's 403. */
  readonly status?: number;
}

export interface WafTraffic {
  /**
   * How many requests alike (same source, method, path and headers) arrive at this instant; a fraction is one
   * source's share of several sources that send alike. @default 1
   */
  readonly count?: number;
  /** Headers whose value differs in every request (forged tokens): each request is an aggregation key of its own. */
  readonly distinctHeaders?: readonly string[];
}

/** What a rate rule counts a request under when each request is a key of its own. */
const UNIQUE = Symbol('unique');

/** A key's counts in 1 s bins over a rate rule's window (a ring of `size` seconds). */
interface Counts {
  readonly stamps: Float64Array;
  readonly values: Float64Array;
}

interface RateState {
  readonly rule: Rule;
  readonly statement: Statement;
  readonly windowSec: number;
  readonly counts: Map<string, Counts>;
  blocked: Set<string>;
  /** When each key was first blocked (ms). */
  readonly firstBlocked: Map<string, number>;
}

export interface WebAclSimulationOptions {
  readonly ipSets?: IpSets;
  /** When the rate rules are first re-estimated (ms, the simulation's clock); then every RATE_CHECK_INTERVAL_MS. */
  readonly firstCheckMs?: number;
  readonly checkIntervalMs?: number;
}

/** The whole web ACL over simulated time (see the file's comment). Time only moves forward. */
export class WebAclSimulation {
  private readonly rules: Rule[];
  private readonly rates = new Map<Rule, RateState>();
  private readonly ipSets: IpSets | undefined;
  private readonly interval: number;
  private nextCheck: number;
  /** Statements' verdicts per request object (they depend on the request only): a simulation reuses its requests. */
  private readonly staticMatches = new WeakMap<WafRequest, Map<Statement, boolean>>();

  constructor(acl: Record<string, any>, opts: WebAclSimulationOptions = {}) {
    this.rules = byPriority(acl);
    this.ipSets = opts.ipSets;
    this.interval = opts.checkIntervalMs ?? RATE_CHECK_INTERVAL_MS;
    this.nextCheck = opts.firstCheckMs ?? 0;
    for (const rule of this.rules) {
      const statement = rule.Statement.RateBasedStatement;
      if (!statement) continue;
      this.rates.set(rule, {
        rule,
        statement,
        // CloudFormation's default window is 300 s.
        windowSec: statement.EvaluationWindowSec ?? 300,
        counts: new Map(),
        blocked: new Set(),
        firstBlocked: new Map(),
      });
    }
  }

  /** The template's one web ACL, its IP set references resolved to the template's IP sets. */
  static fromTemplate(
    template: { Resources: Record<string, { Type: string; Properties?: any }> },
    opts: Omit<WebAclSimulationOptions, 'ipSets'> = {},
  ): WebAclSimulation {
    const acls = Object.values(template.Resources).filter((r) => r.Type === 'AWS::WAFv2::WebACL');
    if (acls.length !== 1) throw new Error(`expected one web ACL, found ${acls.length}`);
    return new WebAclSimulation(acls[0]!.Properties, { ...opts, ipSets: ipSetsOf(template) });
  }

  /** What WAF does with `count` requests alike arriving at `ms`, counting them where its rules count them. */
  evaluate(req: WafRequest, ms: number, traffic: WafTraffic = {}): WafVerdict {
    this.advance(ms);
    const count = traffic.count ?? 1;
    for (const rule of this.rules) {
      const rate = this.rates.get(rule);
      let matched: boolean;
      if (rate) {
        const key = this.count(rate, req, ms, count, traffic.distinctHeaders);
        matched = key !== undefined && rate.blocked.has(key);
      } else matched = this.matchesStatic(rule.Statement, req);
      if (!matched) continue;
      const action = rule.Action ?? {};
      if (action.Block) return { action: 'block', rule, status: action.Block.CustomResponse?.ResponseCode ?? 403 };
      if (action.Allow) return { action: 'allow', rule };
      // Count (or a rule group's override none, whose own rules are not modelled): evaluation goes on.
    }
    return { action: 'allow' };
  }

  /** Runs the rate rules' checks due up to `ms`. */
  advance(ms: number): void {
    while (this.nextCheck <= ms) {
      for (const rate of this.rates.values()) this.check(rate, this.nextCheck);
      this.nextCheck += this.interval;
    }
  }

  /** Aggregation keys a rate rule (by name) blocks now. */
  blockedKeys(ruleName: string): string[] {
    return [...(this.rateNamed(ruleName).blocked ?? [])];
  }

  /** When a rate rule (by name) first blocked a key (ms), if it did. */
  firstBlocked(ruleName: string, key: string): number | undefined {
    return this.rateNamed(ruleName).firstBlocked.get(key);
  }

  /** The aggregation key a rate rule (by name) counts a request under, if it counts it. */
  keyOf(ruleName: string, req: WafRequest): string | undefined {
    const key = this.aggregationKey(this.rateNamed(ruleName).statement, req, undefined);
    return key === UNIQUE ? undefined : key;
  }

  private rateNamed(name: string): RateState {
    const rate = [...this.rates.values()].find((r) => r.rule.Name === name);
    if (!rate) throw new Error(`no rate-based rule ${name}`);
    return rate;
  }

  private matchesStatic(s: Statement, req: WafRequest): boolean {
    let memo = this.staticMatches.get(req);
    if (!memo) this.staticMatches.set(req, (memo = new Map()));
    let hit = memo.get(s);
    if (hit === undefined) memo.set(s, (hit = matches(s, req, this.ipSets)));
    return hit;
  }

  /**
   * The key a rate rule counts the request under, or undefined where it does not count it (its scope-down does
   * not match, a part of the key is missing) or where every request is a key of its own (`distinct`).
   */
  private aggregationKey(
    s: Statement,
    req: WafRequest,
    distinct: readonly string[] | undefined,
  ): string | undefined | typeof UNIQUE {
    if (s.ScopeDownStatement && !this.matchesStatic(s.ScopeDownStatement, req)) return undefined;
    const unique = (name: string) => distinct?.some((d) => d.toLowerCase() === String(name).toLowerCase());
    switch (s.AggregateKeyType) {
      case 'IP':
        if (req.sourceIp === undefined) throw new Error('an IP-keyed rate rule needs the request’s sourceIp');
        return `ip:${req.sourceIp}`;
      case 'CONSTANT':
        return 'constant';
      case 'CUSTOM_KEYS': {
        const parts: string[] = [];
        for (const k of s.CustomKeys as Record<string, any>[]) {
          if (k.Header) {
            const value = headerOf(req, k.Header.Name);
            if (value === undefined) return undefined;
            if (unique(k.Header.Name)) return UNIQUE;
            parts.push(`header:${transform(value, k.Header.TextTransformations)}`);
          } else if (k.IP) {
            if (req.sourceIp === undefined) throw new Error('an IP key needs the request’s sourceIp');
            parts.push(`ip:${req.sourceIp}`);
          } else throw new Error(`custom key not modelled: ${Object.keys(k).join(',')}`);
        }
        return parts.join('\u0000');
      }
      default:
        throw new Error(`aggregate key type not modelled: ${s.AggregateKeyType}`);
    }
  }

  /** Counts the requests; the key they are counted under (undefined: not counted, or each its own key). */
  private count(
    rate: RateState,
    req: WafRequest,
    ms: number,
    n: number,
    distinct: readonly string[] | undefined,
  ): string | undefined {
    const key = this.aggregationKey(rate.statement, req, distinct);
    // A key of one request is never over a limit (AWS's least is 10): nothing to keep.
    if (key === undefined || key === UNIQUE) return undefined;
    const size = rate.windowSec + 1;
    let c = rate.counts.get(key);
    if (!c) rate.counts.set(key, (c = { stamps: new Float64Array(size).fill(-1), values: new Float64Array(size) }));
    const sec = Math.floor(ms / 1000);
    const i = sec % size;
    if (c.stamps[i] !== sec) {
      c.stamps[i] = sec;
      c.values[i] = 0;
    }
    c.values[i]! += n;
    return key;
  }

  private check(rate: RateState, ms: number): void {
    const now = Math.floor(ms / 1000);
    const blocked = new Set<string>();
    for (const [key, c] of rate.counts) {
      let sum = 0;
      for (let i = 0; i < c.stamps.length; i++) if (c.stamps[i]! > now - rate.windowSec) sum += c.values[i]!;
      if (sum > Number(rate.statement.Limit)) {
        blocked.add(key);
        if (!rate.firstBlocked.has(key)) rate.firstBlocked.set(key, ms);
      } else if (sum === 0) rate.counts.delete(key);
    }
    rate.blocked = blocked;
  }
}
