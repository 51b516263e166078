/**
 * A type checker for CloudWatch metric math, after the CloudWatch User Guide, "Metric math syntax and functions":
 * data types S (scalar), TS (time series) and TS[] (array of time series); the arithmetic, comparison and logical
 * operators with the operand pairs it lists; array literals hold time series only; the argument and return types
 * of each function in its table; the valid IF syntaxes ("Using IF expressions"). CloudWatch applies these rules
 * only when an alarm is created (PutMetricAlarm), never at synth, so the tests apply them to the templates.
 * Only the functions this project could plausibly use are listed: anything else is reported as unknown.
 */
export type MathType = 'S' | 'TS' | 'TS[]' | 'STRING' | 'KEYWORD';

type Node =
  | { kind: 'num'; value: number }
  | { kind: 'str' }
  | { kind: 'id'; name: string }
  | { kind: 'array'; items: Node[] }
  | { kind: 'call'; fn: string; args: Node[] }
  | { kind: 'unary'; arg: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node };

const TOKEN =
  /\s*(?:(\d+(?:\.\d+)?)|("[^"]*"|'[^']*')|([A-Za-z_][A-Za-z0-9_]*)|(==|!=|<=|>=|&&|\|\||[-+*/^<>()[\],]))/y;

function tokenize(src: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < src.length) {
    if (/^\s*$/.test(src.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(src);
    if (!m)
      throw new Error(
        `Unexpected character at ${TOKEN.lastIndex}: ${src.slice(TOKEN.lastIndex, TOKEN.lastIndex + 10)}`,
      );
    out.push(m[0].trim());
  }
  return out;
}

const LEVELS: readonly (readonly string[])[] = [
  ['OR', '||'],
  ['AND', '&&'],
  ['==', '!=', '<=', '>=', '<', '>'],
  ['+', '-'],
  ['*', '/'],
  ['^'],
];

function parse(src: string): Node {
  const tokens = tokenize(src);
  let i = 0;
  const peek = () => tokens[i];
  const expect = (t: string) => {
    if (tokens[i] !== t) throw new Error(`Expected ${t} at token ${i} (${tokens[i] ?? 'end'})`);
    i++;
  };
  const level = (n: number): Node => {
    if (n === LEVELS.length) return unary();
    let left = level(n + 1);
    while (peek() !== undefined && LEVELS[n]!.includes(peek()!)) {
      const op = tokens[i++]!;
      left = { kind: 'binary', op, left, right: level(n + 1) };
    }
    return left;
  };
  const list = (close: string): Node[] => {
    const items: Node[] = [];
    if (peek() !== close)
      for (;;) {
        items.push(level(0));
        if (peek() !== ',') break;
        i++;
      }
    expect(close);
    return items;
  };
  const unary = (): Node => {
    const t = tokens[i++];
    if (t === undefined) throw new Error('Unexpected end of expression');
    if (t === '-') return { kind: 'unary', arg: unary() };
    if (t === '(') {
      const e = level(0);
      expect(')');
      return e;
    }
    if (t === '[') return { kind: 'array', items: list(']') };
    if (/^\d/.test(t)) return { kind: 'num', value: Number(t) };
    if (/^["']/.test(t)) return { kind: 'str' };
    if (/^[A-Z][A-Z0-9_]*$/.test(t) && peek() === '(') {
      i++;
      return { kind: 'call', fn: t, args: list(')') };
    }
    if (/^[A-Za-z_]/.test(t)) return { kind: 'id', name: t };
    throw new Error(`Unexpected token ${t}`);
  };
  const root = level(0);
  if (i !== tokens.length) throw new Error(`Unexpected token ${tokens[i]} after the expression`);
  return root;
}

/** A function's accepted argument lists and what each returns (the guide's function table). */
type Signature = readonly [args: readonly (readonly MathType[])[], returns: MathType];
const eachPoint = (): Signature[] => [
  [[['TS']], 'TS'],
  [[['TS[]']], 'TS[]'],
];
const reduce = (): Signature[] => [
  [[['TS']], 'S'],
  [[['TS[]']], 'TS'],
];
const FUNCTIONS: Readonly<Record<string, Signature[]>> = {
  ABS: eachPoint(),
  CEIL: eachPoint(),
  FLOOR: eachPoint(),
  LOG: eachPoint(),
  LOG10: eachPoint(),
  DIFF: eachPoint(),
  DIFF_TIME: eachPoint(),
  RATE: eachPoint(),
  RUNNING_SUM: eachPoint(),
  AVG: reduce(),
  MAX: reduce(),
  MIN: reduce(),
  SUM: reduce(),
  STDDEV: reduce(),
  DATAPOINT_COUNT: reduce(),
  FILL: [
    [[['TS'], ['S', 'KEYWORD']], 'TS'],
    [[['TS[]'], ['TS', 'S', 'KEYWORD']], 'TS[]'],
  ],
  FIRST: [[[['TS[]']], 'TS']],
  LAST: [[[['TS[]']], 'TS']],
  METRIC_COUNT: [[[['TS[]']], 'S']],
  REMOVE_EMPTY: [[[['TS[]']], 'TS[]']],
  METRICS: [
    [[], 'TS[]'],
    [[['STRING']], 'TS[]'],
  ],
  PERIOD: [[[['TS']], 'S']],
  TIME_SERIES: [[[['S']], 'TS']],
  // IF(condition, trueValue[, falseValue]): condition TS (a comparison of a TS with S gives a TS) or S.
  IF: [
    [[['TS'], ['TS', 'S']], 'TS'],
    [[['TS'], ['TS', 'S'], ['TS', 'S']], 'TS'],
    [[['S'], ['TS']], 'TS'],
    [[['S'], ['TS'], ['TS']], 'TS'],
  ],
};

/** Functions the guide recommends not to use in alarms (they act differently when an alarm asks for extra data). */
export const NOT_FOR_ALARMS = ['AVG', 'DATAPOINT_COUNT', 'MAX', 'MIN', 'REMOVE_EMPTY', 'RUNNING_SUM', 'STDDEV', 'SUM'];

const KEYWORDS = new Set(['REPEAT', 'LINEAR']);

export interface CheckResult {
  readonly type?: MathType;
  readonly errors: string[];
  /** Functions called, for alarm-specific rules. */
  readonly functions: Set<string>;
  /** Metric ids added or subtracted bare (not inside FILL) in a sum of two or more series. */
  readonly unfilledSumOperands: Set<string>;
}

/** Types `expression` with the given ids (a metric is TS; another expression has its own type). */
export function checkExpression(expression: string, ids: Readonly<Record<string, MathType>>): CheckResult {
  const errors: string[] = [];
  const functions = new Set<string>();
  const unfilledSumOperands = new Set<string>();
  const name = (t: MathType) =>
    ({ S: 'Scalar', TS: 'TimeSeries', 'TS[]': 'Array[TimeSeries]', STRING: 'String', KEYWORD: 'Keyword' })[t];
  const sumOperands = (n: Node): Node[] =>
    n.kind === 'binary' && (n.op === '+' || n.op === '-') ? [...sumOperands(n.left), ...sumOperands(n.right)] : [n];

  const typeOf = (n: Node): MathType | undefined => {
    switch (n.kind) {
      case 'num':
        return 'S';
      case 'str':
        return 'STRING';
      case 'id':
        if (KEYWORDS.has(n.name)) return 'KEYWORD';
        if (!(n.name in ids)) {
          errors.push(`Unknown id ${n.name}`);
          return undefined;
        }
        return ids[n.name];
      case 'unary': {
        const t = typeOf(n.arg);
        if (t && t !== 'S' && t !== 'TS' && t !== 'TS[]')
          errors.push(`Unsupported operand type for unary -: ${name(t)}`);
        return t;
      }
      case 'array': {
        const types = n.items.map(typeOf);
        // "Arrays must hold time series": a scalar in an array is what CloudWatch rejects as
        // "Unsupported operand type(s) for MAX: '[Array[TimeSeries, Scalar]]'".
        if (types.some((t) => t !== 'TS' && t !== 'TS[]')) {
          errors.push(
            `Array elements must be time series: [Array[${types.map((t) => (t ? name(t) : '?')).join(', ')}]]`,
          );
        }
        return 'TS[]';
      }
      case 'call': {
        functions.add(n.fn);
        const sigs = FUNCTIONS[n.fn];
        const args = n.args.map(typeOf);
        if (!sigs) {
          errors.push(`Unknown or unsupported function ${n.fn}`);
          return undefined;
        }
        if (args.some((a) => a === undefined)) return undefined;
        const sig = sigs.find(
          ([params]) => params.length === args.length && params.every((p, k) => p.includes(args[k]!)),
        );
        if (!sig) {
          errors.push(`Unsupported operand type(s) for ${n.fn}: '[${args.map((a) => name(a!)).join(', ')}]'`);
          return undefined;
        }
        return sig[1];
      }
      case 'binary': {
        const l = typeOf(n.left);
        const r = typeOf(n.right);
        if (!l || !r) return undefined;
        const ok = (t: MathType) => t === 'S' || t === 'TS' || t === 'TS[]';
        if (!ok(l) || !ok(r) || (l === 'TS[]' && r === 'TS[]')) {
          errors.push(`Unsupported operand types for ${n.op}: ${name(l)}, ${name(r)}`);
          return undefined;
        }
        if (n.op === '+' || n.op === '-') {
          const operands = sumOperands(n);
          // A sum of series: the guide treats a missing value as 0, but a series with no data at all in the
          // period leaves the sum empty, so each series of a sum needs FILL.
          if (operands.filter((o) => o.kind !== 'num').length > 1) {
            for (const o of operands) if (o.kind === 'id' && ids[o.name] === 'TS') unfilledSumOperands.add(o.name);
          }
        }
        return l === 'TS[]' || r === 'TS[]' ? 'TS[]' : l === 'TS' || r === 'TS' ? 'TS' : 'S';
      }
    }
  };

  let type: MathType | undefined;
  try {
    type = typeOf(parse(expression));
  } catch (err) {
    errors.push(`Syntax error: ${(err as Error).message}`);
  }
  return { type, errors, functions, unfilledSumOperands };
}

/** The parser, for evaluating an expression on sample values (metric-eval.ts). */
export { parse as parseMathExpression, type Node as MathNode };
