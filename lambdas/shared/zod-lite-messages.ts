/**
 * zod's English messages (zod/v4/locales/en.js) for the issues zod-lite raises, and the stand-in for `zod/locales`
 * in the Lambda bundles (lib/config/bundling.ts): zod-lite always speaks English, so `en()` configures nothing.
 */
export const en = () => ({});

const literal = (v: unknown) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'string' ? `"${v}"` : String(v));

/** What zod's util.parsedType and its English locale call the type of `v`. */
function received(v: any): string {
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : Number.isFinite(v) ? 'number' : String(v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object' && Object.getPrototypeOf(v) !== Object.prototype && 'constructor' in v && v.constructor)
    return v.constructor.name;
  return typeof v;
}

/** zod's English message for an issue (zod/v4/locales/en.js), for the codes zod-lite.ts raises. */
export function messageOf(i: Record<string, any>, input: unknown): string {
  const sizes: Record<string, string> = { string: 'characters', array: 'items' };
  switch (i.code) {
    case 'invalid_type':
      return `Invalid input: expected ${i.expected}, received ${received(input)}`;
    case 'invalid_value':
      return i.values.length === 1
        ? `Invalid input: expected ${literal(i.values[0])}`
        : `Invalid option: expected one of ${i.values.map(literal).join('|')}`;
    case 'too_big':
    case 'too_small': {
      // Every bound raised here is inclusive.
      const [word, adj, bound] = i.code === 'too_big' ? ['big', '<=', i.maximum] : ['small', '>=', i.minimum];
      const unit = sizes[i.origin];
      const what = i.origin ?? 'value';
      return `Too ${word}: expected ${what} to ${unit ? `have ${adj}${bound} ${unit}` : `be ${adj}${bound}`}`;
    }
    case 'invalid_format':
      return i.format === 'regex' ? `Invalid string: must match pattern ${i.pattern}` : 'Invalid URL';
    case 'unrecognized_keys':
      return `Unrecognized key${i.keys.length > 1 ? 's' : ''}: ${i.keys.map(literal).join(', ')}`;
    default:
      return 'Invalid input';
  }
}
