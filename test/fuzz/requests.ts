/**
 * Request generators for every operation in the route table, Schemathesis-style: valid requests built from the
 * schemas' constraints, and invalid ones (wrong types, missing fields, out-of-range limit, unknown status, huge
 * strings, deep JSON, odd unicode, duplicate query parameters, wrong or missing content types, non-JSON bodies,
 * bodies over the cap, garbage path parameters, bad credentials, undeclared methods).
 *
 * Each generated request carries the oracle's expectation. The oracle is written here from the spec and the
 * documented limits (it does not call the service's zod schemas), and it judges the bytes as they go on the wire:
 * lone surrogates in a raw body become U+FFFD in UTF-8, JSON.stringify escapes them instead.
 */
import fc from 'fast-check';
import { MAX_BODY_BYTES, NAME_MAX_LENGTH, PAGE_SIZE, PET_STATUSES, type Pet } from '../../contract/schemas.ts';
import { describe, nextLink, type Expectation, type FuzzRequest } from './exchange.ts';

const STATUSES: readonly string[] = PET_STATUSES;
const MAX_ID = Number.MAX_SAFE_INTEGER;

/** What the fuzzer knows about the server's state, gathered before generating. */
export interface World {
  /**
   * The key requests are made with (Authorization: Bearer), per HTTP method (two keys also keep the limiter's
   * counters for reads and writes apart). Both may be the same key.
   */
  readonly keys: { readonly GET: string; readonly POST: string };
  /** Pets known to exist and not to change. */
  readonly pets: readonly Pet[];
  /** Real cursors from `Link: rel="next"`, with the status filter each was made for. */
  readonly cursors: readonly { cursor: string; status?: string }[];
}

// ---------------------------------------------------------------------------------------------- strings

/** Characters that break naive code: NUL, RTL marks, BOM, zero-width, combining, emoji ZWJ, lone surrogates, … */
const ODD = [
  '\u0000', '\u0001', '\u001f', '\u007f', '\u202e', '\u200f', '\u061c', 'עברית', 'العربية', '\ufeff', '\u200b', '\u2028',
  '\u2029', 'e\u0301', '\u0301', '😀', '👩‍👩‍👧‍👦', '🏳️‍🌈', '\u{10ffff}', '\uffff', '\ufffd', '\ud800', '\udfff', '\udbff\udfff',
  '\t', '\n', '\r', ' ', '\u00a0', '\u3000', '"', '\\', "'", '<script>', '${x}', '%00', '%s', '../', 'null', 'NaN',
];

export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 3 })), { minLength: 1, maxLength: 6 }).map((a) => a.join('')) },
);

/** Names around and past NAME_MAX_LENGTH, in characters of one and two UTF-16 code units. */
const longName: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: NAME_MAX_LENGTH - 2, max: NAME_MAX_LENGTH + 2 }).map((n) => 'n'.repeat(n)),
  fc.integer({ min: 90, max: 110 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: NAME_MAX_LENGTH - 2, max: NAME_MAX_LENGTH + 2 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 1_000, max: 9_000 }).map((n) => 'h'.repeat(n)),
);

// ---------------------------------------------------------------------------------------------- oracle: POST /pets

/** The content types the body parser accepts: application/json and any +json, with parameters, any case. */
const JSON_CT = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

/** Whether the body parser's prototype-pollution guard (a JSON.parse reviver) rejects this JSON; 'too-deep' when
 * the reviver itself overflows the stack (V8 recurses per nesting level: around 2,500 levels). */
function forbiddenKey(text: string): boolean | 'too-deep' {
  let bad = false;
  try {
    JSON.parse(text, (k, v: unknown) => {
      if (k === '__proto__' || (k === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype'))) bad = true;
      return v;
    });
  } catch (err) {
    if (err instanceof RangeError) return 'too-deep';
    throw err;
  }
  return bad;
}

/** The service refuses bodies whose `[`/`{` nesting (outside JSON strings) passes 32 levels, before parsing them. */
function bracketDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') max = Math.max(max, ++depth);
    else if (ch === ']' || ch === '}') depth--;
  }
  return max;
}

/** The spec's NewPet rules, written independently of the zod schema. */
export function newPetProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'body is not an object';
  const o = v as Record<string, unknown>;
  if (typeof o.name !== 'string') return 'name is not a string';
  // Characters are Unicode code points, as JSON Schema's maxLength counts them (zod and Ajv both do).
  const chars = [...o.name].length;
  if (chars < 1 || chars > NAME_MAX_LENGTH) return 'name length out of range';
  if (o.name.trim() === '') return 'name is blank';
  if (!o.name.isWellFormed()) return 'name has a lone surrogate';
  if (typeof o.categoryId !== 'number' || !Number.isSafeInteger(o.categoryId) || o.categoryId < 1) return 'categoryId is not a positive safe integer';
  if (o.status !== undefined && !STATUSES.includes(o.status as string)) return 'status is not a PetStatus';
  return undefined;
}

/** What POST /pets must answer for these bytes and this Content-Type. */
export function createExpectation(body: string | undefined, contentType: string | undefined): { expect: Expectation; why: string } {
  const onWire = body === undefined ? undefined : Buffer.from(body, 'utf8').toString('utf8');
  if (onWire !== undefined && Buffer.byteLength(onWire) > MAX_BODY_BYTES) return { expect: { status: 413, code: 'payload_too_large' }, why: 'over the body cap' };
  if (!onWire) return { expect: { status: 400, code: 'validation_failed' }, why: 'no body' };
  if (bracketDepth(onWire) > 32) return { expect: { status: 400, code: 'validation_failed' }, why: 'nested more than 32 levels' };
  if (!contentType || !JSON_CT.test(contentType.trim())) return { expect: { status: 415, code: 'unsupported_media_type' }, why: `content type ${contentType}` };
  let value: unknown;
  try {
    value = JSON.parse(onWire);
  } catch {
    return { expect: { status: 400, code: 'invalid_json' }, why: 'not JSON' };
  }
  const forbidden = forbiddenKey(onWire);
  if (forbidden === 'too-deep') throw new Error('unreachable: deep bodies are refused before parsing');
  if (forbidden) return { expect: { status: 400, code: 'invalid_json' }, why: 'prototype-pollution key' };
  const problem = newPetProblem(value);
  if (problem) return { expect: { status: 400, code: 'validation_failed' }, why: problem };
  const sent = value as { name: string; categoryId: number; status?: string };
  const echo = { name: sent.name, categoryId: sent.categoryId, status: sent.status ?? 'available' };
  return {
    why: 'valid NewPet',
    expect: {
      status: 201,
      check: (got, headers) => {
        const pet = got as Pet;
        if (!(Number.isSafeInteger(pet.id) && pet.id > 0)) throw new Error(`bad id ${JSON.stringify(got)}`);
        const { id, ...rest } = pet;
        if (JSON.stringify(rest) !== JSON.stringify(echo)) throw new Error(`201 body does not echo the input: sent ${JSON.stringify(echo)}, got ${JSON.stringify(got)}`);
        if (headers.get('location') !== `/v1/pets/${id}`) throw new Error(`Location ${headers.get('location')} for id ${id}`);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------- bodies

const validNewPet = fc.record(
  {
    name: fc.oneof(oddString, fc.constantFrom('Rex', 'Ωmega', '🐕 Fido', 'עברית', 'a\u0000b')).filter((s) => newPetProblem({ name: s, categoryId: 1 }) === undefined),
    categoryId: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.constant(MAX_ID), fc.integer({ min: 1, max: MAX_ID })),
    status: fc.constantFrom(...PET_STATUSES),
  },
  { requiredKeys: ['name', 'categoryId'] },
);

const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -0, 1e308, '', ' ', '1', 'available', [], {}, [1], { name: 'x' }),
  fc.string({ maxLength: 5 }),
  fc.double(),
  fc.integer(),
  longName,
  oddString,
);

/** A valid pet with one thing broken (or one harmless extra). */
const mutatedPet: fc.Arbitrary<unknown> = fc
  .tuple(validNewPet, fc.constantFrom('drop-name', 'drop-category', 'name', 'categoryId', 'status', 'extra', 'id', 'status-case'), wrongValue)
  .map(([pet, how, w]) => {
    const p: Record<string, unknown> = { ...pet };
    if (how === 'drop-name') delete p.name;
    else if (how === 'drop-category') delete p.categoryId;
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
  .tuple(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 41, max: 20_000 })), fc.constantFrom('[', '{"a":'), fc.boolean())
  .map(([depth, open, wrapped]) => {
    const close = open === '[' ? ']' : '}';
    const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return wrapped ? `{"name":"deep","categoryId":3,"extra":${deep}}` : deep;
  });

const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '', ' ', 'null', 'true', '0', '"pet"', '[]', '{}', '{"name":"x",', "{'name':'x','categoryId':1}", 'name=x&categoryId=1', 'NaN',
    '{"name":"x","categoryId":1,}', '\ufeff{"name":"bom","categoryId":1}', '{"name":"x","categoryId":01}', '{"name":"x","categoryId":1e0}',
    '{"name":"a","name":"b","categoryId":2}', '{"name":"x","categoryId":1,"__proto__":{"admin":true}}',
    '{"name":"x","categoryId":1,"constructor":{"prototype":{"admin":true}}}', '{"name":"\\ud800","categoryId":1}',
    '{"name":"nul\\u0000","categoryId":1}', '{"name":"x","categoryId":1e400}', '{"name":"x","categoryId":9007199254740993}',
    '<pet><name>x</name></pet>', '\u0000', '{"name":"x","categoryId":1}\u0000', '{"name":"x","categoryId":1} trailing',
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

const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined, '', 'application/json; charset=utf-8', 'Application/JSON', 'application/problem+json', 'application/vnd.pets.v1+json;q=1',
      'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp',
      'application/xml', '*/*', 'application/octet-stream', 'json', 'application/json-seq',
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
    'lower-case bearer': { Authorization: `bearer ${key}` },
    'Token scheme': { Authorization: `Token ${key}` },
    'key without a scheme': { Authorization: key },
    'two spaces': { Authorization: `Bearer  ${key}` },
    'key plus junk': { Authorization: `Bearer ${key} x` },
    'two credentials': { Authorization: `Bearer ${key}, Bearer ${key}` },
    'unknown well-formed key': { Authorization: `Bearer unknown_${'0'.repeat(32)}` },
    'key one char off': { Authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}` },
    'too short key': { Authorization: 'Bearer short' },
    'too long key': { Authorization: `Bearer ${'k'.repeat(129)}` },
    'key in X-Api-Key only': { 'X-Api-Key': key },
  };
}

const badAuth = (key: string) => fc.constantFrom(...Object.values(badCredentials(key)));

// ---------------------------------------------------------------------------------------------- GET /pets

type Pair = readonly [string, string];

/** Form-encodes like URLSearchParams, but keeps every pair (duplicates included) in the order given. */
const encodePairs = (pairs: readonly Pair[]) => pairs.map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`).join('&');

const limitValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: PAGE_SIZE.min, max: PAGE_SIZE.max }).map(String) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom('0', '101', '-1', '1.5', '1e2', '', ' 5', '05', '0x10', '+5', '99999999999999999999', 'abc', '٣', '5 ', 'NaN', 'Infinity'),
      fc.integer().map(String),
      oddString,
    ),
  },
);
const statusValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...PET_STATUSES) },
  { weight: 3, arbitrary: fc.oneof(fc.constantFrom('Available', 'SOLD', 'lost', '', ' sold', 'sold\u0000', 'pending,sold', 'availabl'), oddString) },
);
const junkCursor: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', 'x', 'a.b', 'a.b.c', 'eyJhIjoxfQ.', '.sig', 'eyJhIjoxLCJzIjpudWxsLCJlIjo5OTk5OTk5OTk5fQ.AAAA', 'c'.repeat(2048), 'c'.repeat(2049)),
  oddString,
  fc.base64String({ maxLength: 80 }),
);

function listExpectation(pairs: readonly Pair[], world: World): { expect: Expectation; why: string } {
  const seen = new Map<string, string[]>();
  for (const [k, v] of pairs) seen.set(k.toWellFormed(), [...(seen.get(k.toWellFormed()) ?? []), v.toWellFormed()]);
  const dup = [...seen].find(([, v]) => v.length > 1);
  const bad = (why: string) => ({ expect: { status: 400, code: 'validation_failed' }, why });
  if (dup) return bad(`${dup[0]} given twice`);
  const one = (k: string) => seen.get(k)?.[0];
  const limit = one('limit');
  const status = one('status');
  const cursor = one('cursor');
  if (limit !== undefined && !(/^(0|[1-9][0-9]*)$/.test(limit) && Number(limit) >= PAGE_SIZE.min && Number(limit) <= PAGE_SIZE.max)) return bad(`limit ${limit}`);
  if (status !== undefined && !STATUSES.includes(status)) return bad(`status ${status}`);
  if (cursor !== undefined && (cursor.length < 1 || cursor.length > 2048)) return bad('cursor length');
  if (cursor !== undefined) {
    const real = world.cursors.find((c) => c.cursor === cursor);
    if (!real || (real.status ?? undefined) !== status) return { expect: { status: 400, code: 'invalid_cursor' }, why: 'forged or mismatched cursor' };
  }
  const max = limit === undefined ? PAGE_SIZE.default : Number(limit);
  return {
    why: 'valid list',
    expect: {
      status: 200,
      check: (body, headers) => {
        if (!Array.isArray(body)) throw new Error('list body is not an array');
        if (body.length > max) throw new Error(`page of ${body.length} > limit ${max}`);
        for (const p of body as Pet[]) if (status && p.status !== status) throw new Error(`status filter ${status} returned ${JSON.stringify(p)}`);
        const next = nextLink(headers);
        if (headers.get('link') && !next) throw new Error(`unparseable Link ${headers.get('link')}`);
        if (next && status && !next.includes(`status=${status}`)) throw new Error(`next link drops the filter: ${next}`);
      },
    },
  };
}

const listPairs = (world: World): fc.Arbitrary<Pair[]> => {
  const realCursor = world.cursors.length
    ? fc.constantFrom(...world.cursors).map((c): Pair[] => [['cursor', c.cursor], ...(c.status ? [['status', c.status] as Pair] : [])])
    : fc.constant<Pair[]>([]);
  const pair: fc.Arbitrary<Pair> = fc.oneof(
    { weight: 4, arbitrary: limitValue.map((v): Pair => ['limit', v]) },
    { weight: 4, arbitrary: statusValue.map((v): Pair => ['status', v]) },
    { weight: 1, arbitrary: junkCursor.map((v): Pair => ['cursor', v]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('LIMIT', 'Status', 'page', 'offset', 'q', 'limit[]', ''), oddString) },
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.array(pair, { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.tuple(realCursor, fc.option(limitValue.map((v): Pair => ['limit', v]), { nil: undefined })).map(([c, l]) => (l ? [...c, l] : c)) },
    // duplicates on purpose
    { weight: 1, arbitrary: fc.tuple(pair, fc.string({ maxLength: 4 })).map(([p, v]): Pair[] => [p, [p[0], v]]) },
  );
};

/** Raw query strings the encoder above would never produce: the gateway must still answer 200 or 400. */
const RAW_QUERIES = ['?%', '?limit=%zz', '?limit=%ED%A0%80', '?status=%C0%AF', '?&&&', '?=', '?limit', '?limit=5;status=sold', '?limit=1&limit', '?status[]=sold'];

// ---------------------------------------------------------------------------------------------- GET /pets/{petId}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const GARBAGE_IDS = [
  '0', '-1', '-0', '01', '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809', '9007199254740993', '1.0', '1e3', '0x10', '+1', ' 1', '1 ', '9007199254740992', '99999999999999999999', 'abc', 'null', 'undefined',
  '١', '１', '1\u0000', '\u202e1', '😀', '%', "'; DROP TABLE pets;--", '$(id)', 'x'.repeat(4000), '/', '?', '#',
];
/** Encoded on the wire as given: some are not valid percent-encoding at all (the gateway answers 404 for those). */
const RAW_ID_SEGMENTS = ['%', '%zz', '%ED%A0%80', '%C0%AF', '%FF', '%E2%82'];

function getExpectation(segment: string, world: World): { expect: Expectation; why: string } {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return { expect: { status: 404, code: 'not_found' }, why: 'undecodable path (no route matches)' };
  }
  // The spec types petId as int64: anything else is 400; an int64 no pet has (the service assigns 1 to 2^53-1) is 404.
  if (!/^(0|-?[1-9][0-9]*)$/.test(id) || BigInt(id) < INT64_MIN || BigInt(id) > INT64_MAX) return { expect: { status: 400, code: 'validation_failed' }, why: `petId ${id.slice(0, 40)}` };
  const pet = world.pets.find((p) => BigInt(p.id) === BigInt(id));
  if (!pet) return { expect: { status: 404, code: 'not_found' }, why: 'no such pet' };
  return {
    why: 'existing pet',
    expect: {
      status: 200,
      check: (body) => {
        if (JSON.stringify(body) !== JSON.stringify(pet)) throw new Error(`GET returned ${JSON.stringify(body)}, stored ${JSON.stringify(pet)}`);
      },
    },
  };
}

const petIdSegment = (world: World): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: world.pets.length ? fc.constantFrom(...world.pets.map((p) => String(p.id))) : fc.constant('1') },
    // Ids far above anything the run allocates, so a concurrent create never makes them exist.
    { weight: 2, arbitrary: fc.integer({ min: 1e12, max: MAX_ID }).map(String) },
    // int64 values up to and just past its bounds (none the run can allocate): valid ones are 404, the others 400.
    { weight: 1, arbitrary: fc.oneof(fc.bigInt({ min: INT64_MIN - 2n, max: 0n }), fc.bigInt({ min: 10n ** 12n, max: INT64_MAX + 2n })).map(String) },
    // Not ids the run may allocate meanwhile (a concurrent create would make the oracle's 404 a 200).
    { weight: 3, arbitrary: fc.oneof(fc.constantFrom(...GARBAGE_IDS), oddString.filter((s) => s !== '' && !/^[1-9][0-9]{0,11}$/.test(s))).map((s) => encodeURIComponent(s.toWellFormed())) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_ID_SEGMENTS) },
  ).filter((s) => s !== '' && s !== '.' && s !== '..');

// ---------------------------------------------------------------------------------------------- undeclared methods

/** Methods Node's HTTP parser knows that no declared path supports. (CONNECT/TRACE/TRACK are forbidden in fetch.) */
export const UNDECLARED_METHODS = ['PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PURGE', 'PROPFIND', 'COPY', 'MOVE', 'LOCK', 'SEARCH', 'REPORT'];

// ---------------------------------------------------------------------------------------------- all operations

/** One generated request against any operation, with the oracle's expectation. */
export function anyRequest(world: World): fc.Arbitrary<FuzzRequest> {
  const auth = { Authorization: `Bearer ${world.keys.GET}` };
  const postAuth = { Authorization: `Bearer ${world.keys.POST}` };

  const create = fc.tuple(createBody, contentType).map(([body, ct]): FuzzRequest => {
    const { expect, why } = createExpectation(body, ct);
    return { method: 'POST', path: '/pets', headers: { ...postAuth, ...(ct === undefined ? {} : { 'Content-Type': ct }) }, body, expect, why };
  });

  const list = fc.oneof(
    { weight: 9, arbitrary: listPairs(world).map((pairs) => ({ pairs, raw: undefined as string | undefined })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES).map((raw) => ({ pairs: [] as Pair[], raw })) },
  ).map(({ pairs, raw }): FuzzRequest => {
    if (raw !== undefined) {
      // The oracle reads raw queries the way a URL parser does (WHATWG: lenient percent-decoding).
      const parsed = [...new URLSearchParams(raw.slice(1))] as Pair[];
      return { method: 'GET', path: `/pets${raw}`, headers: auth, ...listExpectation(parsed, world) };
    }
    const q = encodePairs(pairs);
    return { method: 'GET', path: `/pets${q ? `?${q}` : ''}`, headers: auth, ...listExpectation(pairs, world) };
  });

  const get = petIdSegment(world).map((seg): FuzzRequest => ({ method: 'GET', path: `/pets/${seg}`, headers: auth, ...getExpectation(seg, world) }));

  const orders = listPairs(world).map((pairs): FuzzRequest => {
    const q = encodePairs(pairs);
    return { method: 'GET', path: `/store/orders${q ? `?${q}` : ''}`, headers: auth, expect: { status: 501, code: 'not_implemented' }, why: 'contract not specified' };
  });

  const wrongMethod = fc
    .tuple(fc.constantFrom(['/pets', 'GET, POST'], ['/pets/1', 'GET'], ['/store/orders', 'GET']), fc.constantFrom(...UNDECLARED_METHODS), fc.boolean())
    .map(([[path, allow], method, withKey]): FuzzRequest => ({
      method,
      path,
      headers: withKey ? auth : {},
      expect: { status: 405, code: 'method_not_allowed', allow },
      why: 'undeclared method',
    }));

  const unknownPath = fc
    .constantFrom('/', '/pet', '/pets/1/x', '/PETS', '/store', '/store/orders/1', '/v1/pets', '/pets/1/2/3')
    .map((path): FuzzRequest => ({ method: 'GET', path, headers: auth, expect: { status: 404, code: 'not_found' }, why: 'no route' }));

  const operation = fc.oneof(
    { weight: 40, arbitrary: create },
    { weight: 28, arbitrary: list },
    { weight: 20, arbitrary: get },
    { weight: 3, arbitrary: orders },
    { weight: 5, arbitrary: wrongMethod },
    { weight: 2, arbitrary: unknownPath },
  );

  // Now and then the same request with bad credentials: 401 wherever a route matches, before any other check.
  return fc
    .tuple(operation, fc.oneof({ weight: 11, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: badAuth(world.keys.GET) }))
    .map(([r, bad]): FuzzRequest => {
      const routed = r.expect.status !== 405 && !(r.expect.status === 404 && r.why !== 'no such pet' && r.why !== 'existing pet');
      if (!bad || !routed) return r;
      const { Authorization: _, ...rest } = r.headers;
      return { ...r, headers: { ...rest, ...bad }, expect: { status: 401, code: 'unauthorized' }, why: `bad credentials (${JSON.stringify(bad).slice(0, 60)})` };
    })
    // fast-check prints counterexamples with this: one short line per request instead of closures and 30 KB bodies.
    .map((r) => Object.assign(r, { [fc.toStringMethod]: () => describe(r) }));
}
