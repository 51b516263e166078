/**
 * fast-check arbitraries for the fuzzer, Schemathesis-style: valid values built from the schemas' constraints, and
 * invalid ones (wrong types, missing fields, out-of-range limit, unknown status, huge strings, deep JSON, odd
 * unicode, duplicate query parameters, wrong or missing content types, non-JSON bodies, bodies over the cap, garbage
 * path parameters, bad credentials, undeclared methods). Query, path and method arbitraries are in
 * arbitraries-paths.ts; requests.ts pairs them with the oracle's expectations.
 */
import fc from 'fast-check';
import { MAX_BODY_BYTES, NAME_MAX_LENGTH, PET_STATUSES, type NewPet } from '../../contract/schemas.ts';
import { NEW_PET_REQUIRED, NEW_PET_RULES } from './oracle.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';

const MAX_ID = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------------------------------------- strings

/** Characters that break naive code: NUL, RTL marks, BOM, zero-width, combining, emoji ZWJ, lone surrogates, … */
const ODD = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u202e',
  '\u200f',
  '\u061c',
  'עברית',
  'العربية',
  '\ufeff',
  '\u200b',
  '\u2028',
  '\u2029',
  'e\u0301',
  '\u0301',
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '\u{10ffff}',
  '\uffff',
  '\ufffd',
  '\ud800',
  '\udfff',
  '\udbff\udfff',
  // '${x}' is a literal on purpose: input for naive templating.
  '\t',
  '\n',
  '\r',
  ' ',
  '\u00a0',
  '\u3000',
  '"',
  '\\',
  "'",
  '<script>',
  '${x}',
  '%00',
  '%s',
  '../',
  'null',
  'NaN',
];

export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 6 })
      .map((a) => a.join('')),
  },
);

/** Names around and past NAME_MAX_LENGTH, in characters of one and two UTF-16 code units. */
const longName: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: NAME_MAX_LENGTH - 2, max: NAME_MAX_LENGTH + 2 }).map((n) => 'n'.repeat(n)),
  fc.integer({ min: 90, max: 110 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: NAME_MAX_LENGTH - 2, max: NAME_MAX_LENGTH + 2 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 1_000, max: 9_000 }).map((n) => 'h'.repeat(n)),
);

// ---------------------------------------------------------------------------------------------- bodies

/** One generator per NewPet field: typed by the schema, so a field added to NewPet is named here by the compiler. */
export type NewPetArbitraries = { readonly [K in keyof Required<NewPet>]: fc.Arbitrary<Required<NewPet>[K]> };

const NEW_PET_FIELDS: NewPetArbitraries = {
  name: fc
    .oneof(oddString, fc.constantFrom('Rex', 'Ωmega', '🐕 Fido', 'עברית', 'a\u200bb', '👩\u200d💻'))
    .filter((s) => NEW_PET_RULES.name.problem(s) === undefined),
  categoryId: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.constant(MAX_ID), fc.integer({ min: 1, max: MAX_ID })),
  status: fc.constantFrom(...PET_STATUSES),
};

/**
 * Valid NewPet bodies, some fields' generators replaced (the stateful test's names near the length limit): one
 * generator per field, here, so a field added to NewPet is written once for every test that makes pets.
 */
export const validNewPetWith = (fields: Partial<NewPetArbitraries> = {}) =>
  fc.record({ ...NEW_PET_FIELDS, ...fields }, { requiredKeys: NEW_PET_REQUIRED });

const validNewPet = validNewPetWith();

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -0, 1e308, '', ' ', '1', 'available', [], {}, [1], {
    name: 'x',
  }),
  fc.string({ maxLength: 5 }),
  fc.double(),
  fc.integer(),
  longName,
  oddString,
);

/** A valid pet with one thing broken (or one harmless extra). */
const mutatedPet: fc.Arbitrary<unknown> = fc
  .tuple(
    validNewPet,
    // Each field of the oracle's (the schema's) dropped or given a wrong value.
    fc.constantFrom(...Object.keys(NEW_PET_RULES).flatMap((f) => [`drop-${f}`, f]), 'extra', 'id', 'status-case'),
    wrongValue,
  )
  .map(([pet, how, w]) => {
    const p: Record<string, unknown> = { ...pet };
    if (how.startsWith('drop-')) delete p[how.slice('drop-'.length)];
    else if (how === 'status-case') p.status = String(p.status ?? 'sold').toUpperCase();
    else if (how === 'extra') p.extra = w;
    else if (how === 'id') p.id = w;
    else p[how] = w;
    return p;
  });

/** Deep nesting, either as the whole body or inside an ignored field of a valid pet. */
const deepBody: fc.Arbitrary<string> = fc
  // Depths around the service's cap of 32 levels and far beyond it (past the ~2,500 levels where a recursive parser
  // would overflow the stack).
  .tuple(
    fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 20_000 })),
    fc.constantFrom('[', '{"a":'),
    fc.boolean(),
  )
  .map(([depth, open, wrapped]) => {
    const close = open === '[' ? ']' : '}';
    const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return wrapped ? `{"name":"deep","categoryId":3,"extra":${deep}}` : deep;
  });

const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'null',
    'true',
    '0',
    '"pet"',
    '[]',
    '{}',
    '{"name":"x",',
    "{'name':'x','categoryId':1}",
    'name=x&categoryId=1',
    'NaN',
    '{"name":"x","categoryId":1,}',
    '\ufeff{"name":"bom","categoryId":1}',
    '{"name":"x","categoryId":01}',
    '{"name":"x","categoryId":1e0}',
    '{"name":"a","name":"b","categoryId":2}',
    '{"name":"x","categoryId":1,"__proto__":{"admin":true}}',
    '{"name":"x","categoryId":1,"constructor":{"prototype":{"admin":true}}}',
    '{"name":"\\ud800","categoryId":1}',
    '{"name":"nul\\u0000","categoryId":1}',
    '{"name":"x","categoryId":1e400}',
    '{"name":"x","categoryId":9007199254740993}',
    '<pet><name>x</name></pet>',
    '\u0000',
    '{"name":"x","categoryId":1}\u0000',
    '{"name":"x","categoryId":1} trailing',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

const hugeBody: fc.Arbitrary<string> = fc.integer({ min: MAX_BODY_BYTES - 64, max: MAX_BODY_BYTES * 4 }).map((n) => {
  const head = '{"name":"big","categoryId":1,"pad":"';
  return `${head}${'p'.repeat(Math.max(0, n - head.length - 2))}"}`;
});

export const createBody: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: validNewPet.map((p) => JSON.stringify(p)) },
  { weight: 5, arbitrary: mutatedPet.map((p) => JSON.stringify(p)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: rawBody },
  { weight: 1, arbitrary: deepBody },
  { weight: 1, arbitrary: hugeBody },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/problem+json',
      'application/vnd.pets.v1+json;q=1',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'application/xml',
      '*/*',
      'application/octet-stream',
      'json',
      'application/json-seq',
    ),
  },
);

// ---------------------------------------------------------------------------------------------- credentials

/** Malformed, wrong-scheme and unknown credentials: every one must get 401 (never reach a handler). */
export function badCredentials(key: string): Record<string, Record<string, string>> {
  return {
    'no Authorization': {},
    'empty Authorization': { Authorization: '' },
    'Bearer without a key': { Authorization: 'Bearer' },
    'Basic scheme': { Authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    'Token scheme': { Authorization: `Token ${key}` },
    'key without a scheme': { Authorization: key },
    'two spaces': { Authorization: `Bearer  ${key}` },
    'key plus junk': { Authorization: `Bearer ${key} x` },
    'two credentials': { Authorization: `Bearer ${key}, Bearer ${key}` },
    // The issued shape, never issued: refused by the storage read (other shapes are refused with none).
    'unknown well-formed key': { Authorization: `Bearer ${generateKey()}` },
    'key one char off': { Authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}` },
    'too short key': { Authorization: 'Bearer short' },
    'too long key': { Authorization: `Bearer ${'k'.repeat(129)}` },
    'key in X-Api-Key only': { 'X-Api-Key': key },
  };
}

export const badAuth = (key: string) => fc.constantFrom(...Object.values(badCredentials(key)));
