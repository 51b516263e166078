/**
 * The spec's resources as zod schemas, declared once. Types, request validation and the OpenAPI document all
 * derive from these. zod/mini, zod's tree-shakable API, has classic zod's engine and JSON Schema output in a much
 * smaller bundle.
 */
import * as z from 'zod/mini';
import { en } from 'zod/locales';

// English messages for validation errors (zod/mini ships none by default): they reach clients in the Error object.
z.config(en());

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
/** Default `status` when a create omits it (spec: "not shown"): a new animal in the store is available. */
export const DEFAULT_PET_STATUS = 'available' satisfies (typeof PET_STATUSES)[number];
export const NAME_MAX_LENGTH = 200;
export const PAGE_SIZE = { min: 1, max: 100, default: 20 } as const;
/** Bodies larger than this (bytes, after base64 decoding) get 413. A NewPet is well under 1 KiB. */
export const MAX_BODY_BYTES = 8 * 1024;

/**
 * Attaches OpenAPI metadata (id, description, example…) to a schema instance. The generator collects every named
 * schema the entries reach, so a body schema only one operation uses may live in its entry file.
 */
export const meta = <T extends z.ZodMiniType>(schema: T, data: z.core.GlobalMeta): T => {
  z.globalRegistry.add(schema, data);
  return schema;
};

export const PetStatus = meta(z.enum(PET_STATUSES), { id: 'PetStatus', description: 'Availability of the animal.' });

/**
 * What shows nothing on screen: white space, format characters (U+200B zero width space, U+FEFF, bidi marks…) and
 * the other default-ignorable code points (U+3164 Hangul filler…). A name made only of these looks empty.
 */
const INVISIBLE = /[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
/** C0 and C1 control characters (NUL, ESC, tab, newline…): they end strings, move cursors or colour terminals. */
const CONTROL = /\p{Cc}/u;
/**
 * Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). They make a name display as another
 * ("Trojan Source") and reorder what follows it. The plain marks (U+200E, U+200F, U+061C) change no order beyond
 * themselves, so they stay allowed.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;

/**
 * The BMP code points (surrogates aside) that a one-character expression matches, as a character class of `\uXXXX`
 * escapes only. Every JSON Schema validator reads such a class the same, with or without the `u` flag.
 * Spectral, Ajv with `unicodeRegExp: false` and Python's `re` know no `\p{…}`. Without `u`, `[^\p{Cc}]` refuses the
 * letters p, C and c. Code points beyond U+FFFF cannot be written so: a surrogate pair is one character with `u` and
 * two without. The zod checks handle those.
 */
function bmpClass(re: RegExp): string {
  const one = new RegExp(re.source, re.flags.replace('g', ''));
  const hex = (c: number) => `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
  let out = '';
  let start = -1;
  for (let c = 0; c <= 0x10000; c++) {
    const inSet = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && one.test(String.fromCharCode(c));
    if (inSet && start < 0) start = c;
    if (!inSet && start >= 0) {
      out += start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`;
      start = -1;
    }
  }
  return out;
}

/**
 * The name rules as the document's pattern, from the expressions the checks below use. `(?![\s\S]*[…])`: no control
 * or bidirectional character anywhere (not `^[^…]*$`: Python's `$` also matches before a final newline).
 * `(?![…]*$)`: not only invisible characters. Built only when the document is generated: the sweep is too slow for a
 * function's start.
 */
let namePatternMemo: string | undefined;
export function namePattern(): string {
  namePatternMemo ??= `^(?![\\s\\S]*[${bmpClass(new RegExp(`${CONTROL.source}|${BIDI_CONTROL.source}`, 'u'))}])(?![${bmpClass(INVISIBLE)}]*$)`;
  return namePatternMemo;
}

const name = meta(
  z.string().check(
    z.minLength(1),
    z.maxLength(NAME_MAX_LENGTH),
    z.refine(
      (s) => s.replace(INVISIBLE, '').length > 0,
      'name must not be blank (spaces and invisible characters such as U+200B do not count)',
    ),
    z.refine((s) => !CONTROL.test(s), 'name must not contain control characters (U+0000-U+001F, U+007F-U+009F)'),
    z.refine(
      (s) => !BIDI_CONTROL.test(s),
      'name must not contain bidirectional overrides or isolates (U+202A-U+202E, U+2066-U+2069)',
    ),
    z.refine((s) => s.isWellFormed(), 'name must be well-formed Unicode (no lone surrogates)'),
  ),
  {
    description: `The animal's name: 1 to ${NAME_MAX_LENGTH} characters, at least one of them visible (white space and invisible characters such as U+200B do not count), no control characters (U+0000-U+001F, U+007F-U+009F), no bidirectional overrides or isolates (U+202A-U+202E, U+2066-U+2069). The pattern states these rules for U+0000-U+FFFF, as every validator reads it with or without the \`u\` flag; a name made only of invisible characters beyond U+FFFF (the tag characters U+E0020-U+E007F…) passes it and is still refused.`,
    // A getter: the registry reads it only when the document is generated (namePattern).
    get pattern() {
      return namePattern();
    },
    example: 'Rex',
  },
);

const positiveId = (data: Record<string, unknown>) => meta(z.int().check(z.minimum(1)), { format: 'int64', ...data });
const categoryId = () => positiveId({ description: 'Identifier of the category the animal belongs to.', example: 1 });

// Strict: the spec lists NewPet's fields and says nothing of others. An unknown one (a misspelt `Status`) is refused
// by name, rather than dropped while the client believes it was stored.
export const NewPet = meta(
  z.strictObject({
    name,
    categoryId: categoryId(),
    status: meta(z.optional(PetStatus), { description: `Defaults to \`${DEFAULT_PET_STATUS}\` when omitted.` }),
  }),
  { id: 'NewPet', description: 'An animal as sent when creating it. Any other field is refused (400).' },
);
export type NewPet = z.infer<typeof NewPet>;

export const Pet = meta(
  z.object({
    id: positiveId({ description: 'Unique identifier assigned by the service on creation.', example: 1001 }),
    name,
    categoryId: categoryId(),
    status: PetStatus,
  }),
  { id: 'Pet', description: 'An animal as returned.' },
);
export type Pet = z.infer<typeof Pet>;
export type PetStatus = z.infer<typeof PetStatus>;

export const Pets = meta(z.array(Pet), { id: 'Pets', description: 'A page of animals.' });

/** Canonical decimal: no sign, leading zero, fraction or exponent (`01`, `+1`, `1.0`, `1e3` are refused). */
const WHOLE_NUMBER = /^(0|[1-9][0-9]*)$/;

/**
 * Query strings arrive as strings: accept only canonical decimal integers. Documented as the integer it stands for,
 * with the pattern its text must match (a pattern constrains only strings in JSON Schema: it says how to write it).
 */
const decimal = (min: number, max: number) =>
  meta(
    z.pipe(
      z.pipe(z.string().check(z.regex(WHOLE_NUMBER, 'must be a whole number')), z.transform(Number)),
      z.int().check(z.minimum(min), z.maximum(max)),
    ),
    { type: 'integer', minimum: min, maximum: max, pattern: WHOLE_NUMBER.source },
  );

// The query parameters' descriptions and examples are the document's (lib/api/openapi.ts lists them from here).
/** A list operation's `cursor` parameter: any list, whatever its resource (lambdas/shared/paging.ts binds it). */
export const pageCursor = () =>
  meta(z.optional(z.string().check(z.minLength(1), z.maxLength(2048))), {
    description:
      'Opaque cursor taken from the previous page\'s `Link: rel="next"`; use that link as is. It is bound to the list it came from (the operation, its path and its filters) and expires after 24 hours.',
  });

export const ListPetsQuery = z.object({
  limit: meta(z.optional(decimal(PAGE_SIZE.min, PAGE_SIZE.max)), {
    description: `Maximum number of animals returned (${PAGE_SIZE.min} to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}).`,
    default: PAGE_SIZE.default,
    example: PAGE_SIZE.default,
  }),
  status: meta(z.optional(PetStatus), { description: 'Filters by availability.', example: 'available' }),
  cursor: pageCursor(),
});
export type ListPetsQuery = z.infer<typeof ListPetsQuery>;

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n } as const;

/**
 * A path id is any int64 (the spec's type) in canonical decimal; anything else is 400. The service assigns ids from 1
 * to 2^53-1 only, so any other int64 names no pet (404). It stays an exact bigint, never sent to DynamoDB.
 * As a number, two ids above 2^53 could round to one.
 */
const CANONICAL_INT = /^(0|-?[1-9][0-9]{0,18})$/;
/** A fresh schema each call: `meta` registers on the schema itself, so two parameters must never share one. */
const int64Id = () =>
  z.pipe(
    z.string().check(
      z.regex(CANONICAL_INT, 'must be a 64-bit integer in decimal'),
      // zod runs every check: this one only judges what the pattern let through.
      z.refine(
        (s) => !CANONICAL_INT.test(s) || (BigInt(s) >= INT64.min && BigInt(s) <= INT64.max),
        'must be a 64-bit integer (int64)',
      ),
    ),
    z.transform((s): number | bigint => {
      const n = Number(s);
      return Number.isSafeInteger(n) && n >= 1 ? n : BigInt(s);
    }),
  );
export const PetId = int64Id();
/** A path's pet id: a number when the service could have assigned it, else a bigint that names no pet. */
export type PetId = z.infer<typeof PetId>;

// Documented as the int64 it stands for, with the pattern its text must match. No minimum/maximum: the int64
// bounds are not exact JSON numbers in JavaScript, and format int64 states them.
/** A path parameter naming an item whose id the service assigns (any int64 is well formed; see int64Id). */
export const idParam = (description: string, example: number) =>
  meta(int64Id(), { description, type: 'integer', format: 'int64', pattern: CANONICAL_INT.source, example });

export const PetIdParam = z.object({ petId: idParam('Identifier of the animal.', 1001) });

export const ErrorObject = meta(
  z.object({
    code: meta(z.string(), { description: 'Machine-readable error code.', example: 'not_found' }),
    message: meta(z.string(), { description: 'Human-readable description.' }),
    status: meta(z.int(), { description: 'The HTTP status code.', example: 404 }),
  }),
  { id: 'Error' },
);

/** Turns a zod failure into one readable sentence for the Error object's message. */
export function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => clip(i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message, 200))
    .join('; ');
}

/**
 * A client-chosen text cut to `max` code points (never a lone surrogate), marked with an ellipsis.
 * An error message that echoes a field or parameter name must not echo 9 KB of it.
 */
export function clip(text: string, max = 64): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text;
}
