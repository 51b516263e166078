/**
 * zod/mini, as much of it as the schemas use (contract/schemas.ts, lambdas/shared/config.ts), for the Lambda bundles
 * only: the shared bundling config (lib/config/bundling.ts) resolves `zod/mini` and `zod/locales` to this file, so a
 * function validates with the schemas exactly as declared, on this engine instead of zod's (~30 KB of each bundle,
 * and its set-up at every cold start: docs/performance.md). Everything else (the OpenAPI document, the local server,
 * the tests) runs real zod.
 *
 * It follows zod 4's rules for what it implements: a type's checks run in order after its parse, a failed parse or
 * an aborting issue skips the checks that follow (length checks still run on anything with a length), a pipe stops
 * at its first issue, an object strips unknown keys (reports them when strict) and leaves absent optional keys out,
 * strings are measured in code points; the issues carry zod's codes, paths and English messages
 * (zod-lite-messages.ts). What it does not implement cannot be used by accident: the bundle fails (esbuild: no
 * matching export), not a request. test/unit/zod-lite.test.ts runs every schema through both engines on generated
 * inputs and compares what they return, issue by issue.
 */

import { messageOf } from './zod-lite-messages.ts';

interface Issue {
  code: string;
  path: PropertyKey[];
  input?: unknown;
  message?: string;
  /** True: the checks after it still run. Undefined: they do not (a failed parse). False: nothing more runs. */
  continue?: boolean;
  [field: string]: unknown;
}
interface Payload {
  value: any;
  issues: Issue[];
  aborted?: boolean;
}
interface Check {
  /** Length checks run whenever the value has a length, unless an issue said to stop everything. */
  readonly when?: boolean;
  run(p: Payload): void;
}
type Params = string | { error?: string; message?: string } | undefined;

const textOf = (params: Params) => (typeof params === 'string' ? params : (params?.error ?? params?.message));
const stopped = (p: Payload, from: number, explicit: boolean) =>
  p.aborted === true || p.issues.slice(from).some((i) => (explicit ? i.continue === false : i.continue !== true));
/** Records an issue. A failed parse stops the checks that follow; a failed check (`flag`) does not. */
const push = (p: Payload, issue: Omit<Issue, 'path'> & { code: string }, params?: Params) => {
  const message = textOf(params);
  p.issues.push({
    ...issue,
    path: [],
    input: issue.input === undefined ? p.value : issue.input,
    ...(message ? { message } : {}),
  });
  return p;
};
const flag = (p: Payload, issue: Omit<Issue, 'path'> & { code: string }, params?: Params) =>
  push(p, { ...issue, continue: true }, params);

class Schema {
  readonly parseType: (p: Payload) => Payload;
  readonly checks: readonly Check[];
  /** How an object treats the key when absent: 'optional' may be left out, 'defaulted' gets a value. */
  readonly optin?: 'optional' | 'defaulted';
  readonly optout?: 'optional';

  constructor(
    parseType: (p: Payload) => Payload,
    checks: readonly Check[] = [],
    optin?: 'optional' | 'defaulted',
    optout?: 'optional',
  ) {
    this.parseType = parseType;
    this.checks = checks;
    this.optin = optin;
    this.optout = optout;
  }

  check(...checks: Check[]): Schema {
    return new Schema(this.parseType, [...this.checks, ...checks], this.optin, this.optout);
  }

  run(payload: Payload): Payload {
    const p = this.parseType(payload);
    let aborted = stopped(p, 0, false);
    for (const check of this.checks) {
      if (check.when ? stopped(p, 0, true) || p.value?.length === undefined : aborted) continue;
      const before = p.issues.length;
      check.run(p);
      if (!aborted && p.issues.length > before) aborted = stopped(p, before, false);
    }
    return p;
  }

  safeParse(value: unknown) {
    const { value: data, issues } = this.run({ value, issues: [] });
    if (!issues.length) return { success: true as const, data };
    const error = {
      issues: issues.map(({ input, continue: _continue, ...rest }) => ({
        ...rest,
        message: rest.message ?? messageOf(rest, input),
      })),
    };
    return { success: false as const, error };
  }

  parse(value: unknown) {
    const r = this.safeParse(value);
    if (!r.success) throw Object.assign(new Error(JSON.stringify(r.error.issues)), r.error);
    return r.data;
  }
}

const typed = (expected: string, ok: (v: unknown) => boolean, checks?: Check[]) =>
  new Schema((p) => (ok(p.value) ? p : push(p, { code: 'invalid_type', expected })), checks);

export const string = () => typed('string', (v) => typeof v === 'string');

const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
/** z.int(): a number, then (as its first check) a safe integer. */
export const int = () =>
  typed('number', isNumber, [
    {
      run(p) {
        const v = p.value as number;
        if (!Number.isInteger(v))
          push(p, { code: 'invalid_type', expected: 'int', format: 'safeint', continue: false });
        else if (!Number.isSafeInteger(v))
          flag(
            p,
            v > 0
              ? { code: 'too_big', origin: 'int', maximum: Number.MAX_SAFE_INTEGER }
              : { code: 'too_small', origin: 'int', minimum: Number.MIN_SAFE_INTEGER },
          );
      },
    },
  ]);

export const coerce = {
  number: () =>
    new Schema((p) => {
      p.value = Number(p.value);
      return isNumber(p.value) ? p : push(p, { code: 'invalid_type', expected: 'number' });
    }),
};

/** z.url(): a string that parses as a URL, trimmed (and without tabs and line breaks, as the URL parser reads it). */
export const url = () =>
  string().check({
    run(p) {
      const trimmed = (p.value as string).trim();
      if (URL.canParse(trimmed)) p.value = trimmed.replace(/[\t\n\r]/g, '');
      else flag(p, { code: 'invalid_format', format: 'url' });
    },
  });

const enum_ = (values: readonly unknown[]) =>
  new Schema((p) => (values.includes(p.value) ? p : push(p, { code: 'invalid_value', values })));
export { enum_ as enum };

export const array = (element: Schema) =>
  new Schema((p) => {
    if (!Array.isArray(p.value)) return push(p, { code: 'invalid_type', expected: 'array' });
    p.value = p.value.map((item: unknown, i: number) => {
      const r = element.run({ value: item, issues: [] });
      for (const issue of r.issues) p.issues.push({ ...issue, path: [i, ...issue.path] });
      return r.value;
    });
    return p;
  });

/** An object schema keeps its `shape`, as zod's does (the envelope reads the declared names from it). */
const objectOf = (shape: Record<string, Schema>, strict: boolean) =>
  withShape(shape, (p) => {
    const input = p.value;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return push(p, { code: 'invalid_type', expected: 'object' });
    const out: Record<string, unknown> = {};
    p.value = out;
    for (const key of Object.keys(shape)) {
      if (key === '__proto__') continue;
      const field = shape[key]!;
      const present = key in input;
      const r = field.run({ value: input[key], issues: [] });
      if (!present && field.optout === 'optional' && field.optin === 'optional') continue;
      if (r.issues.length) {
        // An absent key that may be left out drops its issues (a default that failed, say).
        if (!present && field.optout === 'optional' && field.optin !== undefined) continue;
        for (const issue of r.issues) p.issues.push({ ...issue, path: [key, ...issue.path] });
      }
      if (!present && field.optin === undefined) {
        if (!r.issues.length) p.issues.push({ code: 'invalid_type', expected: 'nonoptional', path: [key] });
      } else if (r.value !== undefined) out[key] = r.value;
      else if (present || (field.optin === 'defaulted' && field.optout !== 'optional')) out[key] = undefined;
    }
    if (strict) {
      const keys: string[] = [];
      for (const k in input) if (!Object.hasOwn(shape, k)) keys.push(k);
      if (keys.length) flag(p, { code: 'unrecognized_keys', keys, input });
    }
    return p;
  });
function withShape(shape: Record<string, Schema>, parse: (p: Payload) => Payload): Schema & { shape: typeof shape } {
  return Object.assign(new Schema(parse), { shape });
}
export const object = (shape: Record<string, Schema>) => objectOf(shape, false);
export const strictObject = (shape: Record<string, Schema>) => objectOf(shape, true);

export const optional = (inner: Schema) =>
  new Schema(
    (p) => {
      if (p.value !== undefined) return inner.run(p);
      if (inner.optin === 'defaulted') {
        const r = inner.run({ value: undefined, issues: [] });
        p.value = r.issues.length ? undefined : r.value;
      }
      return p;
    },
    [],
    inner.optin === 'defaulted' ? 'defaulted' : 'optional',
    'optional',
  );

export const _default = (inner: Schema, value: unknown) => {
  const fallback = () => (typeof value === 'function' ? (value as () => unknown)() : value);
  return new Schema(
    (p) => {
      if (p.value === undefined) {
        p.value = fallback();
        return p;
      }
      const r = inner.run(p);
      if (r.value === undefined) r.value = fallback();
      return r;
    },
    [],
    'defaulted',
  );
};

export const pipe = (from: Schema, to: Schema) =>
  new Schema(
    (p) => {
      const left = from.run(p);
      if (left.issues.some((i) => i.code !== 'unrecognized_keys')) {
        left.aborted = true;
        return left;
      }
      return to.run({ value: left.value, issues: left.issues });
    },
    [],
    from.optin,
    to.optout,
  );

export const transform = (fn: (value: any, payload: Payload) => unknown) =>
  new Schema(
    (p) => {
      p.value = fn(p.value, p);
      return p;
    },
    [],
    'optional',
  );

/** A string's length in code points (a surrogate pair counts once), anything else's `length`. */
const lengthOf = (v: any): number => (typeof v === 'string' ? [...v].length : v.length);
const lengthOrigin = (v: unknown) => (typeof v === 'string' ? 'string' : Array.isArray(v) ? 'array' : 'unknown');

export const minLength = (minimum: number, params?: Params): Check => ({
  when: true,
  run: (p) =>
    void (
      lengthOf(p.value) >= minimum || flag(p, { code: 'too_small', origin: lengthOrigin(p.value), minimum }, params)
    ),
});
export const maxLength = (maximum: number, params?: Params): Check => ({
  when: true,
  run: (p) =>
    void (lengthOf(p.value) <= maximum || flag(p, { code: 'too_big', origin: lengthOrigin(p.value), maximum }, params)),
});
export const minimum = (value: number, params?: Params): Check => ({
  run: (p) => void (p.value >= value || flag(p, { code: 'too_small', origin: 'number', minimum: value }, params)),
});
export const maximum = (value: number, params?: Params): Check => ({
  run: (p) => void (p.value <= value || flag(p, { code: 'too_big', origin: 'number', maximum: value }, params)),
});
export const regex = (pattern: RegExp, params?: Params): Check => ({
  run(p) {
    pattern.lastIndex = 0;
    if (!pattern.test(p.value)) flag(p, { code: 'invalid_format', format: 'regex', pattern: String(pattern) }, params);
  },
});
export const refine = (fn: (value: any) => unknown, params?: Params): Check => ({
  run: (p) => void (fn(p.value) || flag(p, { code: 'custom' }, params)),
});

/** The OpenAPI metadata registry: nothing in a Lambda reads it. */
export const globalRegistry = { add: () => globalRegistry };
/** Messages are always zod's English ones (zod-lite-messages.ts, which also stands in for `zod/locales`). */
export const config = (_locale?: unknown) => undefined;
