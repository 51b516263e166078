/**
 * The fuzzer's oracle: what the service must answer for a generated request. It is written here from the spec and
 * the documented limits (it does not call the service's zod schemas), and it judges the bytes as they go on the
 * wire: lone surrogates in a raw body become U+FFFD in UTF-8, JSON.stringify escapes them instead.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  DEFAULT_PET_STATUS,
  MAX_BODY_BYTES,
  NAME_MAX_LENGTH,
  PAGE_SIZE,
  PET_STATUSES,
  type NewPet,
  type Pet,
} from '../../contract/schemas.ts';
import { nextLink, type Expectation } from './exchange.ts';
import type { SampleRequest } from '../helpers/samples.ts';

const STATUSES: readonly string[] = PET_STATUSES;

/** What the fuzzer knows about the server's state, gathered before generating. */
export interface World {
  /**
   * The key requests are made with (Authorization: Bearer): one for operations that read, one for those that write
   * (by the route's `does`), so the limiter's counters for each stay apart. Both may be the same key.
   */
  readonly keys: { readonly reads: string; readonly writes: string };
  /** Pets known to exist and not to change. */
  readonly pets: readonly Pet[];
  /** Real cursors from `Link: rel="next"`, with the status filter each was made for. */
  readonly cursors: readonly { cursor: string; status?: string }[];
  /** Every operation's sample request, what it names made (route-samples.ts): the arm that covers every route. */
  readonly samples: readonly SampleRequest[];
}

export type Pair = readonly [string, string];

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

// ---------------------------------------------------------------------------------------------- oracle: POST /pets

/** The content types the body parser accepts: application/json and any +json, with parameters, any case. */
const JSON_CT = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

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

/** A field's rule: whether it must be sent, and what is wrong with a value sent (undefined when nothing). */
interface FieldRule {
  readonly required: boolean;
  readonly problem: (value: unknown) => string | undefined;
}

/**
 * The spec's NewPet rules, one per field, written independently of the zod schema. Keyed by the schema's fields: a
 * field added to NewPet fails the type check here until its rule is written (the oracle does not guess it), and the
 * generators (arbitraries.ts, stateful.test.ts) take the fields and which are required from here.
 */
export const NEW_PET_RULES: { readonly [K in keyof Required<NewPet>]: FieldRule } = {
  name: {
    required: true,
    problem(name) {
      if (typeof name !== 'string') return 'name is not a string';
      // Characters are Unicode code points, as JSON Schema's maxLength counts them (zod and Ajv both do).
      const chars = [...name].length;
      if (chars < 1 || chars > NAME_MAX_LENGTH) return 'name length out of range';
      // Blank: nothing visible, only white space, format or other default-ignorable characters (U+200B, U+FEFF…).
      if (name.replace(/[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu, '') === '') return 'name is blank';
      if ([...name].some((c) => c.codePointAt(0)! < 0x20 || (c.codePointAt(0)! >= 0x7f && c.codePointAt(0)! < 0xa0)))
        return 'name has a control character';
      if (!name.isWellFormed()) return 'name has a lone surrogate';
      if (/[\u202A-\u202E\u2066-\u2069]/u.test(name)) return 'name has a bidirectional override or isolate';
      return undefined;
    },
  },
  categoryId: {
    required: true,
    problem: (id) =>
      typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1
        ? 'categoryId is not a positive safe integer'
        : undefined,
  },
  status: {
    required: false,
    problem: (status) => (STATUSES.includes(status as string) ? undefined : 'status is not a PetStatus'),
  },
};
const NEW_PET_FIELDS = Object.keys(NEW_PET_RULES) as (keyof NewPet)[];
/** The fields a valid NewPet must hold (the generators' `requiredKeys`). */
export const NEW_PET_REQUIRED = NEW_PET_FIELDS.filter((f) => NEW_PET_RULES[f].required);

/** The spec's NewPet rules (NEW_PET_RULES) applied to a body: the first thing wrong with it, or undefined. */
export function newPetProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'body is not an object';
  const o = v as Record<string, unknown>;
  for (const f of NEW_PET_FIELDS) {
    if (o[f] === undefined) {
      if (NEW_PET_RULES[f].required) return `${f} is missing`;
      continue;
    }
    const problem = NEW_PET_RULES[f].problem(o[f]);
    if (problem) return problem;
  }
  const unknown = Object.keys(o).find((k) => !(NEW_PET_FIELDS as string[]).includes(k));
  if (unknown !== undefined) return `unknown field ${unknown}`;
  return undefined;
}

/**
 * Whether a JSON text repeats a key in one object, found independently of the service's scanner: JSON.parse keeps
 * one value per key, so a text with a repeated key has more `"key":` occurrences than the parsed value has keys.
 */
function hasDuplicateKey(value: unknown, text: string): boolean {
  let keys = 0;
  const count = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(count);
    else if (v && typeof v === 'object') for (const [, x] of Object.entries(v).map((e) => (keys++, e))) count(x);
  };
  count(value);
  // Every string of the text in order (so a match never starts inside one); a key is a string followed by a colon.
  const inText = [...text.matchAll(/"(?:[^"\\]|\\.)*"(\s*:)?/g)].filter((m) => m[1] !== undefined).length;
  return inText > keys;
}

/** What POST /pets must answer for these bytes and this Content-Type. */
export function createExpectation(
  body: string | undefined,
  contentType: string | undefined,
): { expect: Expectation; why: string } {
  const onWire = body === undefined ? undefined : Buffer.from(body, 'utf8').toString('utf8');
  if (onWire !== undefined && Buffer.byteLength(onWire) > MAX_BODY_BYTES)
    return { expect: { status: 413, code: 'payload_too_large' }, why: 'over the body cap' };
  if (!onWire) return { expect: { status: 400, code: 'validation_failed' }, why: 'no body' };
  if (bracketDepth(onWire) > 32)
    return { expect: { status: 400, code: 'validation_failed' }, why: 'nested more than 32 levels' };
  if (!contentType || !JSON_CT.test(contentType.trim()))
    return { expect: { status: 415, code: 'unsupported_media_type' }, why: `content type ${contentType}` };
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8')
    return { expect: { status: 415, code: 'unsupported_media_type' }, why: `charset ${charset}` };
  // Lone surrogates in the generated text reach the wire as U+FFFD, the mark of bytes that were not UTF-8.
  if (onWire.includes('\uFFFD')) return { expect: { status: 400, code: 'invalid_json' }, why: 'not UTF-8' };
  let value: unknown;
  try {
    value = JSON.parse(onWire);
  } catch {
    return { expect: { status: 400, code: 'invalid_json' }, why: 'not JSON' };
  }
  if (hasDuplicateKey(value, onWire)) return { expect: { status: 400, code: 'validation_failed' }, why: 'a key twice' };
  // A `__proto__` or `constructor.prototype` key is an unknown field like any other: refused. (JSON.parse makes it
  // an own property, so newPetProblem sees it as a key.)
  const problem = newPetProblem(value);
  if (problem) return { expect: { status: 400, code: 'validation_failed' }, why: problem };
  // The pet is what was sent (every field valid, none unknown) with the status the service defaults.
  const sent = value as NewPet;
  const echo = { ...sent, status: sent.status ?? DEFAULT_PET_STATUS };
  return {
    why: 'valid NewPet',
    expect: {
      status: 201,
      check: (got, headers) => {
        const pet = got as Pet;
        if (!(Number.isSafeInteger(pet.id) && pet.id > 0)) throw new Error(`bad id ${JSON.stringify(got)}`);
        const { id, ...rest } = pet;
        if (!isDeepStrictEqual(rest, echo))
          throw new Error(`201 body does not echo the input: sent ${JSON.stringify(echo)}, got ${JSON.stringify(got)}`);
        if (headers.get('location') !== `/v1/pets/${id}`)
          throw new Error(`Location ${headers.get('location')} for id ${id}`);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------- GET /pets

export function listExpectation(pairs: readonly Pair[], world: World): { expect: Expectation; why: string } {
  const seen = new Map<string, string[]>();
  for (const [k, v] of pairs) seen.set(k.toWellFormed(), [...(seen.get(k.toWellFormed()) ?? []), v.toWellFormed()]);
  const dup = [...seen].find(([, v]) => v.length > 1);
  const bad = (why: string) => ({ expect: { status: 400, code: 'validation_failed' }, why });
  if (dup) return bad(`${dup[0]} given twice`);
  const one = (k: string) => seen.get(k)?.[0];
  const limit = one('limit');
  const status = one('status');
  const cursor = one('cursor');
  if (
    limit !== undefined &&
    !(/^(0|[1-9][0-9]*)$/.test(limit) && Number(limit) >= PAGE_SIZE.min && Number(limit) <= PAGE_SIZE.max)
  )
    return bad(`limit ${limit}`);
  if (status !== undefined && !STATUSES.includes(status)) return bad(`status ${status}`);
  if (cursor !== undefined && (cursor.length < 1 || cursor.length > 2048)) return bad('cursor length');
  // A parameter listPets does not declare (a misspelt `Status`) is refused by name, like an unknown body field.
  const unknown = [...seen.keys()].find((k) => !['limit', 'status', 'cursor'].includes(k));
  if (unknown !== undefined) return bad(`unknown parameter ${unknown}`);
  if (cursor !== undefined) {
    const real = world.cursors.find((c) => c.cursor === cursor);
    if (!real || (real.status ?? undefined) !== status)
      return { expect: { status: 400, code: 'invalid_cursor' }, why: 'forged or mismatched cursor' };
  }
  const max = limit === undefined ? PAGE_SIZE.default : Number(limit);
  return {
    why: 'valid list',
    expect: {
      status: 200,
      check: (body, headers) => {
        if (!Array.isArray(body)) throw new Error('list body is not an array');
        if (body.length > max) throw new Error(`page of ${body.length} > limit ${max}`);
        for (const p of body as Pet[])
          if (status && p.status !== status) throw new Error(`status filter ${status} returned ${JSON.stringify(p)}`);
        const next = nextLink(headers);
        if (headers.get('link') && !next) throw new Error(`unparseable Link ${headers.get('link')}`);
        if (next && status && !next.includes(`status=${status}`))
          throw new Error(`next link drops the filter: ${next}`);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------- GET /pets/{petId}

export function getExpectation(segment: string, world: World): { expect: Expectation; why: string } {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return { expect: { status: 404, code: 'not_found' }, why: 'undecodable path (no route matches)' };
  }
  // The spec types petId as int64: anything else is 400; an int64 no pet has (the service assigns 1 to 2^53-1) is 404.
  if (!/^(0|-?[1-9][0-9]*)$/.test(id) || BigInt(id) < INT64_MIN || BigInt(id) > INT64_MAX)
    return { expect: { status: 400, code: 'validation_failed' }, why: `petId ${id.slice(0, 40)}` };
  const pet = world.pets.find((p) => BigInt(p.id) === BigInt(id));
  if (!pet) return { expect: { status: 404, code: 'not_found' }, why: 'no such pet' };
  return {
    why: 'existing pet',
    expect: {
      status: 200,
      check: (body) => {
        if (JSON.stringify(body) !== JSON.stringify(pet))
          throw new Error(`GET returned ${JSON.stringify(body)}, stored ${JSON.stringify(pet)}`);
      },
    },
  };
}
