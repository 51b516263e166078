/**
 * Metric math evaluated on one datapoint of each metric, as CloudWatch evaluates an expression point by point
 * ("Metric math syntax and functions"): a missing datapoint is absent (FILL supplies a value), a comparison or
 * logical operator gives 1 or 0, IF picks its second or third argument, a division by zero gives no value. Only what
 * alarms here use on single series (no arrays, no functions over time): enough to play a gate alarm on sample
 * minutes of traffic.
 */
import { parseMathExpression, type MathNode } from './metric-math.ts';

type Value = number | undefined;

const BINARY: Readonly<Record<string, (a: number, b: number) => Value>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => (b === 0 ? undefined : a / b),
  '^': (a, b) => a ** b,
  '==': (a, b) => Number(a === b),
  '!=': (a, b) => Number(a !== b),
  '<': (a, b) => Number(a < b),
  '<=': (a, b) => Number(a <= b),
  '>': (a, b) => Number(a > b),
  '>=': (a, b) => Number(a >= b),
  AND: (a, b) => Number(a !== 0 && b !== 0),
  '&&': (a, b) => Number(a !== 0 && b !== 0),
  OR: (a, b) => Number(a !== 0 || b !== 0),
  '||': (a, b) => Number(a !== 0 || b !== 0),
};

/** The expression's value at one datapoint, given each id's value there (undefined: no datapoint). */
export function evaluateAt(expression: string, values: Readonly<Record<string, Value>>): Value {
  return compileExpression(expression)(values);
}

/** The expression parsed once, for evaluating it at many datapoints (a simulation plays it thousands of times). */
export function compileExpression(expression: string): (values: Readonly<Record<string, Value>>) => Value {
  const root = parseMathExpression(expression);
  return (values) => evaluateNode(root, values);
}

function evaluateNode(root: MathNode, values: Readonly<Record<string, Value>>): Value {
  const at = (n: MathNode): Value => {
    switch (n.kind) {
      case 'num':
        return n.value;
      case 'str':
      case 'array':
        throw new Error(`metric-eval: ${n.kind} is not evaluated`);
      case 'id':
        if (!(n.name in values)) throw new Error(`metric-eval: no value for ${n.name}`);
        return values[n.name];
      case 'unary': {
        const v = at(n.arg);
        return v === undefined ? undefined : -v;
      }
      case 'binary': {
        const a = at(n.left);
        const b = at(n.right);
        return a === undefined || b === undefined ? undefined : BINARY[n.op]!(a, b);
      }
      case 'call': {
        if (n.fn === 'FILL') return at(n.args[0]!) ?? at(n.args[1]!);
        if (n.fn === 'IF') {
          const c = at(n.args[0]!);
          if (c === undefined) return undefined;
          return c !== 0 ? at(n.args[1]!) : n.args[2] ? at(n.args[2]) : undefined;
        }
        throw new Error(`metric-eval: ${n.fn} is not evaluated`);
      }
    }
  };
  return at(root);
}
