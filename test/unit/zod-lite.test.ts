/**
 * The functions' bundles validate on lambdas/shared/zod-lite.ts (lib/config/bundling.ts resolves `zod/mini` there),
 * everything else on zod. So every schema a function parses must answer the same on both: the schema module and the
 * configuration module are bundled here exactly as a function's bundle resolves them, and each schema parses the same
 * generated inputs on both engines: the same success and output, or the same issues (code, path, message), in order.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as zm from 'zod/mini';
import * as zodSchemas from '../../contract/schemas.ts';
import * as zl from '../../lambdas/shared/zod-lite.ts';
import * as zodConfig from '../../lambdas/shared/config.ts';
import { BUNDLING } from '../../lib/config/bundling.ts';

const ROOT = resolve(import.meta.dirname, '../..');
type Module = typeof zodSchemas & typeof zodConfig;
let lite: Module;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zod-lite-'));
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(join(ROOT, 'contract/schemas.ts'))};\nexport * from ${JSON.stringify(join(ROOT, 'lambdas/shared/config.ts'))};\n`,
  );
  const out = join(dir, 'lite.mjs');
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    metafile: true,
    absWorkingDir: ROOT,
    alias: Object.fromEntries(Object.entries(BUNDLING.alias).map(([from, to]) => [from, resolve(ROOT, to)])),
    logLevel: 'silent',
  });
  // The bundle under test holds no zod at all.
  expect(Object.keys(r.metafile.inputs).filter((p) => p.includes('node_modules/zod'))).toEqual([]);
  lite = (await import(pathToFileURL(out).href)) as Module;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Parser {
  safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: readonly Record<string, unknown>[] } };
}
/** What a caller can observe of a parse: the output, or each issue's code, path and message. */
const outcome = (schema: Parser, input: unknown) => {
  const r = schema.safeParse(input);
  return r.success
    ? { data: r.data }
    : { issues: r.error!.issues.map(({ code, path, message }) => ({ code, path, message })) };
};
const same = (name: keyof Module, input: unknown) =>
  expect(outcome(lite[name] as unknown as Parser, input), `${String(name)} ${JSON.stringify(input, bigints)}`).toEqual(
    outcome(zodSchemas[name as keyof typeof zodSchemas] as unknown as Parser, input),
  );
const bigints = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

// ---- inputs: anything at all, and values near every rule's edges -------------------------------------------------
const unicode = fc.string({ unit: 'grapheme', maxLength: 12 });
const edgyText = fc.oneof(
  fc.constantFrom('', ' ', '\t', '\u200b', '\u3164', '\ufeff', ' Rex ', 'Rex\u0000', 'a\u0085b', '\ud800', 'x\udc00y'),
  fc.constantFrom('😀'.repeat(100), '😀'.repeat(101), 'x'.repeat(199) + '😀', 'x'.repeat(200), 'x'.repeat(201)),
  unicode,
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const numbers = fc.oneof(
  fc.integer({ min: -3, max: 110 }),
  fc.constantFrom(0, -0, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), Number.MAX_VALUE, NaN, Infinity, -Infinity),
  fc.double(),
);
const decimals = fc.oneof(
  fc.integer({ min: -5, max: 150 }).map(String),
  fc.constantFrom('', '01', '00', ' 5', '5 ', '1e2', '0x10', '+3', '1.0', '100', '101', 'abc', '٣'),
  fc.constantFrom('9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809'),
  fc.constantFrom('9007199254740991', '9007199254740992', '-1', '-0', '0', '99999999999999999999'),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
);
const value = fc.oneof(
  edgyText,
  numbers,
  decimals,
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.anything(),
);
/** An object with some of `keys` (any values, or `likely` ones) and maybe others. */
const recordOf = (keys: readonly string[], likely: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      fc.dictionary(fc.constantFrom(...keys), fc.oneof(likely, likely, value)),
      fc.dictionary(fc.constantFrom('id', 'extra', 'constructor', 'toString', '__proto__', 'Name'), value, {
        maxKeys: 2,
      }),
    )
    .map(([known, other]) => JSON.parse(JSON.stringify({ ...other, ...known })) as unknown);

const runs = { numRuns: 400 };

describe('zod-lite answers as zod for every schema a function parses', () => {
  it('NewPet (createPet body)', () => {
    const statuses = fc.constantFrom('available', 'pending', 'sold', 'lost', 'Sold', '');
    fc.assert(
      fc.property(
        fc.oneof(
          recordOf(['name', 'categoryId', 'status'], fc.oneof(edgyText, numbers, statuses)),
          fc.record({ name: edgyText, categoryId: numbers, status: fc.option(statuses, { nil: undefined }) }),
          value,
        ),
        (input) => {
          same('NewPet', input);
        },
      ),
      runs,
    );
  });

  it('ListPetsQuery (listPets query string)', () => {
    const strings = fc.oneof(decimals, fc.constantFrom('available', 'pending', 'sold', 'lost'), edgyText);
    fc.assert(
      fc.property(
        fc.oneof(
          recordOf(['limit', 'status', 'cursor'], strings),
          fc.record({ limit: decimals }),
          fc.constant({ cursor: 'c'.repeat(2049) }),
          value,
        ),
        (input) => {
          same('ListPetsQuery', input);
        },
      ),
      runs,
    );
  });

  it('PetIdParam (getPet path)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.record({ petId: decimals }), recordOf(['petId'], decimals), value), (input) => {
        same('PetIdParam', input);
      }),
      runs,
    );
  });

  it('the response schemas too (Pet, Pets, Error)', () => {
    const pet = fc.record({ id: numbers, name: edgyText, categoryId: numbers, status: fc.constantFrom('sold', 'x') });
    fc.assert(
      fc.property(fc.oneof(pet, fc.array(pet, { maxLength: 3 }), value), (input) => {
        same('Pet', input);
        same('Pets', input);
        same('ErrorObject', input);
      }),
      runs,
    );
  });

  it('the configuration (every function parses its environment at cold start)', () => {
    const env = fc.dictionary(
      fc.constantFrom(
        'PETS_TABLE_NAME',
        'KEYS_TABLE_NAME',
        'STATE_TABLE_NAME',
        'STAGE',
        'DYNAMODB_ENDPOINT',
        'DYNAMODB_TIMEOUT_MS',
        'CURSOR_SECRET_ARN',
        'CURSOR_SECRET',
        'CORS_ALLOWED_ORIGINS',
        'RATE_LIMITER',
        'METRICS',
        'LOG_LEVEL',
        'OTHER',
      ),
      fc.oneof(
        edgyText,
        decimals,
        fc.constantFrom('Pets-x', 'http://127.0.0.1:8000', ' http://localhost:8000\n', 'nope', 'https://a.b/c?d#e'),
        fc.constantFrom('on', 'off', 'DEBUG', 'INFO', 'debug', 'https://a.example, https://b.example,', '99', '8001'),
      ),
    );
    const load = (m: Pick<Module, 'loadConfig'>, e: Record<string, string>) => {
      try {
        return { config: m.loadConfig(e) };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    fc.assert(
      fc.property(env, (e) => {
        expect(load(lite, e), JSON.stringify(e)).toEqual(load(zodConfig, e));
      }),
      runs,
    );
  });

  it('turns issues into the same sentence for the Error object', () => {
    for (const input of [{ name: 5 }, { name: '', categoryId: 0 }, null, { name: 'x', categoryId: 1.5, status: 1 }]) {
      const ours = lite.NewPet.safeParse(input);
      const theirs = zodSchemas.NewPet.safeParse(input);
      expect(lite.describeIssues(ours.error!)).toBe(zodSchemas.describeIssues(theirs.error!));
    }
  });
});

describe('zod-lite implements its part of the API as zod does', () => {
  // The same declarations on both engines: what a schema may start using (a strict body, say) answers the same.
  const build = (z: typeof zm) => ({
    strict: z.strictObject({ a: z.string(), b: z.optional(z.int().check(z.minimum(0))) }),
    loose: z.object({ n: z._default(z.pipe(z.coerce.number(), z.int()), 7), list: z.optional(z.array(z.enum(['x']))) }),
    nested: z.object({ inner: z.strictObject({ u: z.url(), t: z.string().check(z.maxLength(3), z.regex(/^a/)) }) }),
    defaulted: z.object({ o: z.optional(z._default(z.string(), () => 'd')), e: z.enum(['only']) }),
  });
  const real = build(zm);
  const ours = build(zl as unknown as typeof zm);
  const input = fc.oneof(
    recordOf(['a', 'b', 'n', 'list', 'inner', 'o', 'e'], fc.oneof(value, fc.constant(['x', 'y']), fc.constant('only'))),
    fc.record({
      inner: recordOf(['u', 't'], fc.constantFrom('https://x.example', ' http://a\n', 'abc', 'ab', 'ba', 'aaaa')),
    }),
    value,
  );
  it.each(Object.keys(real) as Array<keyof typeof real>)('%s', (name) => {
    fc.assert(
      fc.property(input, (v) => {
        expect(outcome(ours[name] as unknown as Parser, v), JSON.stringify(v)).toEqual(
          outcome(real[name] as unknown as Parser, v),
        );
      }),
      runs,
    );
  });
});
