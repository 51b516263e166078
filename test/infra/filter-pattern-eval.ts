/**
 * CloudWatch Logs JSON filter patterns, evaluated against JSON log lines, for the subset the stack's metric filters
 * use (CloudWatch Logs User Guide, "Filter pattern syntax for metric filters": "Using filter patterns to match terms
 * in JSON log events"): `{ … }` around string comparisons `$.field = "value"` and `$.field != "value"` (a `*` in the
 * value matches any characters), joined with `&&` and `||` and grouped with parentheses. A comparison on a field the
 * line does not have matches nothing. Anything else is refused, so a pattern the tests cannot read fails them rather
 * than passing unread. Plus the metrics a template's metric filters publish on the access log.
 */
import { resourcesOf, type CfnTemplate } from './templates.ts';

type Node =
  { kind: 'cmp'; field: string; op: '=' | '!='; value: string } | { kind: 'and' | 'or'; left: Node; right: Node };

const TOKEN = /\s*(\$\.[A-Za-z0-9_.]+|"(?:[^"\\]|\\.)*"|&&|\|\||!=|=|\(|\)|\{|\})/y;

function tokenize(src: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(src);
    if (!m) throw new Error(`filter pattern: cannot read at ${at}: ${src.slice(at, at + 20)}`);
    out.push(m[1]!);
  }
  return out;
}

/** Parses a JSON filter pattern (the subset above) into a tree. */
export function parseFilterPattern(pattern: string): Node {
  const tokens = tokenize(pattern);
  let i = 0;
  const expect = (t: string) => {
    if (tokens[i] !== t) throw new Error(`filter pattern: expected ${t} at token ${i}, got ${tokens[i]}`);
    i++;
  };
  const term = (): Node => {
    if (tokens[i] === '(') {
      i++;
      const inner = or();
      expect(')');
      return inner;
    }
    const field = tokens[i++];
    const op = tokens[i++];
    const value = tokens[i++];
    if (!field?.startsWith('$.') || (op !== '=' && op !== '!=') || !value?.startsWith('"'))
      throw new Error(`filter pattern: not a string comparison: ${field} ${op} ${value}`);
    return { kind: 'cmp', field: field.slice(2), op, value: JSON.parse(value) as string };
  };
  const and = (): Node => {
    let left = term();
    while (tokens[i] === '&&') {
      i++;
      left = { kind: 'and', left, right: term() };
    }
    return left;
  };
  const or = (): Node => {
    let left = and();
    while (tokens[i] === '||') {
      i++;
      left = { kind: 'or', left, right: and() };
    }
    return left;
  };
  expect('{');
  const tree = or();
  expect('}');
  if (i !== tokens.length) throw new Error(`filter pattern: trailing tokens ${tokens.slice(i).join(' ')}`);
  return tree;
}

const glob = (value: string) =>
  new RegExp(
    `^${value
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );

function field(line: Record<string, unknown>, path: string): unknown {
  let v: unknown = line;
  for (const part of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

function evaluate(node: Node, line: Record<string, unknown>): boolean {
  switch (node.kind) {
    case 'and':
      return evaluate(node.left, line) && evaluate(node.right, line);
    case 'or':
      return evaluate(node.left, line) || evaluate(node.right, line);
    case 'cmp': {
      const v = field(line, node.field);
      if (v === undefined || v === null || typeof v === 'object') return false;
      const equal = glob(node.value).test(String(v));
      return node.op === '=' ? equal : !equal;
    }
  }
}

/** Whether a JSON filter pattern matches a log line (a JSON object's text). */
export const matchesFilterPattern = (pattern: string, line: string): boolean =>
  evaluate(parseFilterPattern(pattern), JSON.parse(line) as Record<string, unknown>);

/** A template value as text: a plain string, or an `Fn::Join` whose `Ref`s are given values (others refused). */
export function resolveText(value: unknown, refs: Readonly<Record<string, string>>): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) throw new Error(`not text: ${JSON.stringify(value)}`);
  return join[1]
    .map((part) => {
      if (typeof part === 'string') return part;
      const ref = (part as { Ref?: string }).Ref;
      if (ref === undefined || !(ref in refs)) throw new Error(`unresolved part ${JSON.stringify(part)}`);
      return refs[ref]!;
    })
    .join(join[0]);
}

export interface FilterMetric {
  readonly logicalId: string;
  readonly namespace: string;
  readonly name: string;
  /** Each dimension with the value the access log's lines give it (a constant of the format, or undefined). */
  readonly dimensions: Readonly<Record<string, string | undefined>>;
  /** The filter pattern as written in the template (text or `Fn::Join`). */
  readonly pattern: unknown;
}

/**
 * The metrics the metric filters on the API's access log group publish: CloudWatch Logs takes a dimension's value
 * from the named field of the matched line, which for the access log is one of its format's constant fields.
 */
export function accessLogFilterMetrics(t: CfnTemplate): FilterMetric[] {
  const [stageId, stage] = resourcesOf(t, 'AWS::ApiGateway::Stage')[0]!;
  const format = JSON.parse(stage.Properties.AccessLogSetting.Format as string) as Record<string, string>;
  const logGroup = JSON.stringify(stage.Properties.AccessLogSetting.DestinationArn).match(/"Ref":"(\w+)"/)?.[1];
  if (!logGroup) throw new Error(`${stageId}: no access log group`);
  return resourcesOf(t, 'AWS::Logs::MetricFilter')
    .filter(([, f]) => JSON.stringify(f.Properties.LogGroupName) === JSON.stringify({ Ref: logGroup }))
    .flatMap(([id, f]) =>
      (f.Properties.MetricTransformations as any[]).map((m) => ({
        logicalId: id,
        namespace: m.MetricNamespace as string,
        name: m.MetricName as string,
        dimensions: Object.fromEntries(
          ((m.Dimensions ?? []) as { Key: string; Value: string }[]).map((d) => {
            const constant = d.Value.startsWith('$.') ? format[d.Value.slice(2)] : undefined;
            return [d.Key, constant === undefined || constant.includes('$context') ? undefined : constant];
          }),
        ),
        pattern: f.Properties.FilterPattern,
      })),
    );
}
