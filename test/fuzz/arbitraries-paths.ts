/**
 * fast-check arbitraries for the query string, the path and the method: limits and statuses in and out of range,
 * forged cursors, duplicate parameters, raw query strings, garbage and out-of-int64 pet ids, undeclared methods.
 * Bodies, content types and credentials are in arbitraries.ts.
 */
import fc from 'fast-check';
import { PAGE_SIZE, PET_STATUSES } from '../../contract/schemas.ts';
import { INT64_MAX, INT64_MIN, type Pair, type World } from './oracle.ts';
import { oddString } from './arbitraries.ts';

const MAX_ID = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------------------------------------- GET /pets

const limitValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: PAGE_SIZE.min, max: PAGE_SIZE.max }).map(String) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom(
        '0',
        '101',
        '-1',
        '1.5',
        '1e2',
        '',
        ' 5',
        '05',
        '0x10',
        '+5',
        '99999999999999999999',
        'abc',
        '٣',
        '5 ',
        'NaN',
        'Infinity',
      ),
      fc.integer().map(String),
      oddString,
    ),
  },
);
const statusValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...PET_STATUSES) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom('Available', 'SOLD', 'lost', '', ' sold', 'sold\u0000', 'pending,sold', 'availabl'),
      oddString,
    ),
  },
);
const junkCursor: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    'x',
    'a.b',
    'a.b.c',
    'eyJhIjoxfQ.',
    '.sig',
    'eyJhIjoxLCJzIjpudWxsLCJlIjo5OTk5OTk5OTk5fQ.AAAA',
    'c'.repeat(2048),
    'c'.repeat(2049),
  ),
  oddString,
  fc.base64String({ maxLength: 80 }),
);

export const listPairs = (world: World): fc.Arbitrary<Pair[]> => {
  const realCursor = world.cursors.length
    ? fc
        .constantFrom(...world.cursors)
        .map((c): Pair[] => [['cursor', c.cursor], ...(c.status ? [['status', c.status] as Pair] : [])])
    : fc.constant<Pair[]>([]);
  const pair: fc.Arbitrary<Pair> = fc.oneof(
    { weight: 4, arbitrary: limitValue.map((v): Pair => ['limit', v]) },
    { weight: 4, arbitrary: statusValue.map((v): Pair => ['status', v]) },
    { weight: 1, arbitrary: junkCursor.map((v): Pair => ['cursor', v]) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom('LIMIT', 'Status', 'page', 'offset', 'q', 'limit[]', ''), oddString),
    },
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.array(pair, { maxLength: 3 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          realCursor,
          fc.option(
            limitValue.map((v): Pair => ['limit', v]),
            { nil: undefined },
          ),
        )
        .map(([c, l]) => (l ? [...c, l] : c)),
    },
    // duplicates on purpose
    { weight: 1, arbitrary: fc.tuple(pair, fc.string({ maxLength: 4 })).map(([p, v]): Pair[] => [p, [p[0], v]]) },
  );
};

/** Raw query strings the encoder above would never produce: the gateway must still answer 200 or 400. */
export const RAW_QUERIES = [
  '?%',
  '?limit=%zz',
  '?limit=%ED%A0%80',
  '?status=%C0%AF',
  '?&&&',
  '?=',
  '?limit',
  '?limit=5;status=sold',
  '?limit=1&limit',
  '?status[]=sold',
];

// ---------------------------------------------------------------------------------------------- GET /pets/{petId}

const GARBAGE_IDS = [
  '0',
  '-1',
  '-0',
  '01',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '9007199254740993',
  '1.0',
  '1e3',
  '0x10',
  '+1',
  ' 1',
  '1 ',
  '9007199254740992',
  '99999999999999999999',
  'abc',
  'null',
  'undefined',
  '١',
  '１',
  '1\u0000',
  '\u202e1',
  '😀',
  '%',
  "'; DROP TABLE pets;--",
  '$(id)',
  'x'.repeat(4000),
  '/',
  '?',
  '#',
];
/** Encoded on the wire as given: some are not valid percent-encoding at all (the gateway answers 404 for those). */
const RAW_ID_SEGMENTS = ['%', '%zz', '%ED%A0%80', '%C0%AF', '%FF', '%E2%82'];

export const petIdSegment = (world: World): fc.Arbitrary<string> =>
  fc
    .oneof(
      {
        weight: 4,
        arbitrary: world.pets.length ? fc.constantFrom(...world.pets.map((p) => String(p.id))) : fc.constant('1'),
      },
      // Ids far above anything the run allocates, so a concurrent create never makes them exist.
      { weight: 2, arbitrary: fc.integer({ min: 1e12, max: MAX_ID }).map(String) },
      // int64 values up to and just past its bounds (none the run can allocate): valid ones are 404, the others 400.
      {
        weight: 1,
        arbitrary: fc
          .oneof(fc.bigInt({ min: INT64_MIN - 2n, max: 0n }), fc.bigInt({ min: 10n ** 12n, max: INT64_MAX + 2n }))
          .map(String),
      },
      // Not ids the run may allocate meanwhile (a concurrent create would make the oracle's 404 a 200).
      {
        weight: 3,
        arbitrary: fc
          .oneof(
            fc.constantFrom(...GARBAGE_IDS),
            oddString.filter((s) => s !== '' && !/^[1-9][0-9]{0,11}$/.test(s)),
          )
          .map((s) => encodeURIComponent(s.toWellFormed())),
      },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_ID_SEGMENTS) },
    )
    .filter((s) => s !== '' && s !== '.' && s !== '..');

// ---------------------------------------------------------------------------------------------- undeclared methods

/** Methods Node's HTTP parser knows that no declared path supports. (CONNECT/TRACE/TRACK are forbidden in fetch.) */
export const UNDECLARED_METHODS = [
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'PURGE',
  'PROPFIND',
  'COPY',
  'MOVE',
  'LOCK',
  'SEARCH',
  'REPORT',
];
