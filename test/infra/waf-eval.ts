/**
 * A web ACL's rules applied to one request, for the statements the stack uses (AND, OR, NOT, byte match, regex
 * match, size constraint on a method, URI path, single header or body), as AWS WAF documents them: header names are
 * case-insensitive, a statement on a header the request lacks does not match, a body over the inspection limit is
 * "oversize" and handled as its rule says. Rate-based rules are not evaluated (they need traffic over time): a test
 * reads their keys and limits off the template.
 */
export interface WafRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

type Statement = Record<string, any>;

/** What WAF inspects of a regional resource's body (API Gateway's default). */
const BODY_INSPECTION_BYTES = 8 * 1024;

function field(f: Record<string, any>, req: WafRequest): { value?: string; oversize?: boolean } {
  if (f.Method) return { value: req.method };
  if (f.UriPath) return { value: req.path };
  if (f.SingleHeader) {
    const name = String(f.SingleHeader.Name).toLowerCase();
    const hit = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === name);
    return hit ? { value: hit[1] } : {};
  }
  if (f.Body) {
    if (req.body === undefined) return {};
    return { value: req.body, oversize: Buffer.byteLength(req.body) > BODY_INSPECTION_BYTES };
  }
  throw new Error(`field not modelled: ${JSON.stringify(f)}`);
}

function matches(s: Statement, req: WafRequest): boolean {
  if (s.AndStatement) return s.AndStatement.Statements.every((x: Statement) => matches(x, req));
  if (s.OrStatement) return s.OrStatement.Statements.some((x: Statement) => matches(x, req));
  if (s.NotStatement) return !matches(s.NotStatement.Statement, req);
  if (s.ByteMatchStatement) {
    const { value } = field(s.ByteMatchStatement.FieldToMatch, req);
    if (value === undefined) return false;
    const search = String(s.ByteMatchStatement.SearchString);
    switch (s.ByteMatchStatement.PositionalConstraint) {
      case 'EXACTLY':
        return value === search;
      case 'CONTAINS':
        return value.includes(search);
      case 'STARTS_WITH':
        return value.startsWith(search);
      default:
        throw new Error(`positional constraint not modelled: ${s.ByteMatchStatement.PositionalConstraint}`);
    }
  }
  if (s.RegexMatchStatement) {
    const { value } = field(s.RegexMatchStatement.FieldToMatch, req);
    return value !== undefined && new RegExp(s.RegexMatchStatement.RegexString).test(value);
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
  if (s.RateBasedStatement) return false;
  // AWS's lists of addresses (IP reputation): no test address is on them.
  if (s.ManagedRuleGroupStatement) return false;
  throw new Error(`statement not modelled: ${Object.keys(s).join(',')}`);
}

/** The first non-rate rule (by priority) that matches, or undefined (the default action). */
export function firstMatch(acl: Record<string, any>, req: WafRequest): Record<string, any> | undefined {
  const rules = [...(acl.Rules as Record<string, any>[])].sort((a, b) => a.Priority - b.Priority);
  return rules.find((r) => matches(r.Statement, req));
}
