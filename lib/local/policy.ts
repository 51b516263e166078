/**
 * An IAM policy evaluator for the policies our templates write, after AWS's "Policy evaluation logic" (IAM User
 * Guide): an explicit Deny wins, then any Allow, else the request is denied implicitly. It reads `Effect`, `Action` /
 * `NotAction`, `Resource` / `NotResource` (with `*` and `?` wildcards; actions compare case-insensitively, resources
 * exactly), `Principal` (`*`, `Service`, `AWS` as an account id or ARN) and `Condition` with the string, ARN, Bool
 * and Null operators (and their `IfExists` forms) on keys of the request context such as `aws:SourceAccount`,
 * `aws:SourceArn` and `aws:SecureTransport`. Anything else (`NotPrincipal`, numeric or date operators, `ForAnyValue`
 * set operators, policy variables) is refused when the policy is read, never evaluated as an allow or a deny.
 *
 * Shared by the local DynamoDB emulation (lib/local/iam.ts) and the tests that walk AWS services' calls against
 * the synthesized templates' roles and resource policies.
 */

export type Effect = 'Allow' | 'Deny';

/** One statement, its values resolved to strings (ARNs, account ids). */
export interface Statement {
  readonly sid?: string;
  readonly effect: Effect;
  readonly action?: readonly string[];
  readonly notAction?: readonly string[];
  readonly resource?: readonly string[];
  readonly notResource?: readonly string[];
  /** Absent in identity policies (the identity is the principal). */
  readonly principal?: Principal;
  /** Operator → condition key → accepted values. */
  readonly condition?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
}

export type Principal = '*' | { readonly Service?: readonly string[]; readonly AWS?: readonly string[] };

/** Who asks: a service principal, or an IAM principal (its ARN) of an account. */
export interface Caller {
  readonly service?: string;
  readonly account?: string;
  readonly arn?: string;
}

export interface Request {
  readonly action: string;
  readonly resource: string;
  /** Needed for resource policies only. */
  readonly caller?: Caller;
  /** The request context's keys (`aws:SourceAccount`, …), as AWS sets them for this call. */
  readonly context?: Readonly<Record<string, string>>;
}

export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

const KNOWN_KEYS = new Set([
  'Sid',
  'Effect',
  'Action',
  'NotAction',
  'Resource',
  'NotResource',
  'Principal',
  'Condition',
]);

type Test = (actual: string, expected: string) => boolean;
const ci = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const POSITIVE: Readonly<Record<string, Test>> = {
  StringEquals: (a, e) => a === e,
  StringEqualsIgnoreCase: ci,
  StringLike: (a, e) => globMatches(e, a, false),
  ArnEquals: (a, e) => a === e,
  ArnLike: (a, e) => globMatches(e, a, false),
  Bool: (a, e) => ci(a, e),
};
const NEGATED: Readonly<Record<string, string>> = {
  StringNotEquals: 'StringEquals',
  StringNotEqualsIgnoreCase: 'StringEqualsIgnoreCase',
  StringNotLike: 'StringLike',
  ArnNotEquals: 'ArnEquals',
  ArnNotLike: 'ArnLike',
};

const isKnownOperator = (op: string): boolean => {
  const base = op.replace(/IfExists$/, '');
  return base in POSITIVE || base in NEGATED || op === 'Null';
};

/** `glob` (with `*` and `?`) as a regular expression matching a whole value. */
export function globPattern(glob: string, caseInsensitive: boolean): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's');
}

/** Does `glob` (with `*` and `?`) match all of `value`? */
export function globMatches(glob: string, value: string, caseInsensitive: boolean): boolean {
  return globPattern(glob, caseInsensitive).test(value);
}

/** One condition block: every operator, every key, any of its values (AWS's AND of keys, OR of values). */
function conditionHolds(condition: Statement['condition'], context: Readonly<Record<string, string>>): boolean {
  const lower = Object.fromEntries(Object.entries(context).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [op, keys] of Object.entries(condition ?? {})) {
    for (const [key, values] of Object.entries(keys)) {
      const actual = lower[key.toLowerCase()];
      if (op === 'Null') {
        if (!values.some((v) => ci(v, 'true') === (actual === undefined))) return false;
        continue;
      }
      const ifExists = op.endsWith('IfExists');
      const base = op.replace(/IfExists$/, '');
      if (actual === undefined) {
        // A missing key fails a positive operator and satisfies a negated one; IfExists makes both hold.
        if (ifExists || base in NEGATED) continue;
        return false;
      }
      const negated = NEGATED[base];
      const test = POSITIVE[negated ?? base]!;
      const any = values.some((v) => test(actual, v));
      if (negated ? any : !any) return false;
    }
  }
  return true;
}

function principalMatches(principal: Principal | undefined, caller: Caller | undefined): boolean {
  if (principal === undefined) return true;
  if (principal === '*') return true;
  if (!caller) return false;
  if (caller.service && principal.Service?.some((s) => s === caller.service)) return true;
  return (principal.AWS ?? []).some((p) => {
    if (p === '*') return true;
    const account = /^\d{12}$/.test(p) ? p : /^arn:[^:]+:iam::(\d{12}):root$/.exec(p)?.[1];
    // An account (or its root) stands for every IAM principal of that account, never for a service.
    if (account) return !caller.service && caller.account === account;
    return caller.arn === p;
  });
}

/** Does `s` apply to `r` (its effect aside)? */
export function statementMatches(s: Statement, r: Request): boolean {
  const action = s.action
    ? s.action.some((a) => globMatches(a, r.action, true))
    : !s.notAction!.some((a) => globMatches(a, r.action, true));
  const resource = s.resource
    ? s.resource.some((p) => globMatches(p, r.resource, false))
    : !s.notResource!.some((p) => globMatches(p, r.resource, false));
  return action && resource && principalMatches(s.principal, r.caller) && conditionHolds(s.condition, r.context ?? {});
}

/** AWS's order within one policy set: an explicit Deny wins over any Allow; with neither, an implicit deny. */
export function evaluate(statements: readonly Statement[], r: Request): Decision {
  if (statements.some((s) => s.effect === 'Deny' && statementMatches(s, r))) return 'explicit-deny';
  return statements.some((s) => s.effect === 'Allow' && statementMatches(s, r)) ? 'allow' : 'implicit-deny';
}

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * A policy document's statements with every value resolved (`resolve` turns CloudFormation intrinsics into
 * strings). Throws, naming `where`, on anything this evaluator does not read.
 */
export function readStatements(document: unknown, resolve: (value: unknown) => string, where: string): Statement[] {
  const raw = list((document as { Statement?: unknown } | undefined)?.Statement) as Record<string, unknown>[];
  return raw.map((s) => {
    const refuse = (what: string): never => {
      throw new Error(`${where}: ${what} is not evaluated; refusing rather than guessing (${JSON.stringify(s)})`);
    };
    const unknown = Object.keys(s).filter((k) => !KNOWN_KEYS.has(k));
    if (unknown.length) refuse(unknown.join(', '));
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') refuse(`Effect ${String(s.Effect)}`);
    if ((s.Action === undefined) === (s.NotAction === undefined))
      refuse('a statement without exactly one of Action, NotAction');
    if (s.Resource !== undefined && s.NotResource !== undefined) refuse('Resource with NotResource');
    const strings = (v: unknown) => list(v).map(resolve);
    for (const v of [...strings(s.Resource), ...strings(s.NotResource)])
      if (/\$\{/.test(v)) refuse(`the policy variable in ${v}`);
    let principal: Principal | undefined;
    if (s.Principal !== undefined) {
      if (s.Principal === '*') principal = '*';
      else {
        const p = s.Principal as Record<string, unknown>;
        const other = Object.keys(p).filter((k) => k !== 'Service' && k !== 'AWS');
        if (other.length) refuse(`Principal ${other.join(', ')}`);
        principal = { Service: strings(p.Service), AWS: strings(p.AWS) };
      }
    }
    let condition: Record<string, Record<string, string[]>> | undefined;
    if (s.Condition !== undefined) {
      condition = {};
      for (const [op, keys] of Object.entries(s.Condition as Record<string, Record<string, unknown>>)) {
        if (!isKnownOperator(op)) refuse(`the condition operator ${op}`);
        condition[op] = Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, strings(v)]));
      }
    }
    return {
      ...(typeof s.Sid === 'string' ? { sid: s.Sid } : {}),
      effect: s.Effect as Effect,
      ...(s.Action !== undefined
        ? { action: list(s.Action).map(String) }
        : { notAction: list(s.NotAction).map(String) }),
      // A statement of a key policy has Resource "*" (the key itself); a trust policy has none (the role).
      ...(s.NotResource !== undefined
        ? { notResource: strings(s.NotResource) }
        : { resource: s.Resource === undefined ? ['*'] : strings(s.Resource) }),
      ...(principal ? { principal } : {}),
      ...(condition ? { condition } : {}),
    };
  });
}
