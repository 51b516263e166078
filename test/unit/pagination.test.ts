/**
 * The cursor codec on its own, with the secret and clock passed in: any cursor that is not exactly what the service
 * signed is 400 invalid_cursor, never a thrown RangeError or a payload that reaches DynamoDB.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CURSOR_TTL_SECONDS, cursorCodec, listingOf } from '../../lambdas/domain/pagination.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';

const SECRET = 'unit-cursor-secret-0123456789';
const T0 = Date.UTC(2026, 10, 22, 12);
const codec = cursorCodec({ keys: { current: SECRET }, now: () => T0 });
/** listPets' listings, unfiltered and by status. */
const ALL = listingOf(LIST_PETS, { query: {} });
const SOLD = listingOf(LIST_PETS, { query: { status: 'sold' } });

/** What someone holding the secret (or a leaked one) could sign: any payload at all. */
const signed = (payload: unknown, secret = SECRET) => {
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${createHmac('sha256', secret).update(data).digest('base64url')}`;
};

function invalid(cursor: string, listing = ALL): AppError {
  try {
    codec.read(cursor, listing);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_cursor');
    return err as AppError;
  }
  throw new Error(`accepted ${cursor}`);
}

describe('cursorCodec', () => {
  it('reads back what it made, bound to the filter, until it expires', () => {
    const c = codec.make({ id: 42 }, SOLD);
    expect(codec.read(c, SOLD)).toEqual({ id: 42 });
    expect(invalid(c).message).toBe(
      'The cursor was made for another status filter: keep the filter of the first page.',
    );
    const later = cursorCodec({ keys: { current: SECRET }, now: () => T0 + (CURSOR_TTL_SECONDS + 1) * 1000 });
    expect(() => later.read(c, SOLD)).toThrow(/expired/);
  });

  it('refuses a MAC with non-ASCII characters (as long in characters as a real one) without throwing RangeError', () => {
    const [data, mac] = codec.make({ id: 7 }, ALL).split('.') as [string, string];
    for (const odd of ['é', '😀', '\u0000', 'Ā']) {
      // Same length in UTF-16 code units as the real MAC, more bytes in UTF-8.
      invalid(`${data}.${mac.slice(0, mac.length - odd.length)}${odd}`);
    }
  });

  it('refuses anything but the exact signed text: another secret, extra parts, padding, empty parts', () => {
    const real = codec.make({ id: 7 }, ALL);
    const [data, mac] = real.split('.') as [string, string];
    for (const c of [
      signed({ a: 7, r: 'listPets', f: ALL.filters, e: 2e9 }, 'another-secret-0123456789'),
      `${real}.`,
      `.${mac}`,
      `${data}.`,
      `${data}.${mac}=`,
      `${data}=.${mac}`,
      real.toUpperCase(),
      '',
    ]) {
      invalid(c);
    }
  });

  it('refuses a correctly signed payload this module would never write (non-number position, no operation, no expiry)', () => {
    const e = T0 / 1000 + 60;
    const bound = { r: 'listPets', f: ALL.filters };
    for (const p of [
      { a: 'x', ...bound, e },
      { a: { S: '1' }, ...bound, e },
      { a: 1.5, ...bound, e },
      { a: 0, ...bound, e },
      { a: 2 ** 60, ...bound, e },
      { a: 1, r: 7, f: ALL.filters, e },
      { a: 1, r: 'listPets', e },
      { a: 1, ...bound },
      { a: 1, ...bound, e: 'never' },
      null,
      [1],
      'text',
    ]) {
      invalid(signed(p));
    }
    // Signed text that is not JSON at all.
    const data = Buffer.from('not json').toString('base64url');
    invalid(`${data}.${createHmac('sha256', SECRET).update(data).digest('base64url')}`);
  });

  it("refuses a cursor of the format before cursors named their operation: it could be any listing's", () => {
    // `s`, the status filter, was its only binding; what it was made for cannot be told, so it is refused as any
    // other cursor the service does not write (the client starts again from the first page).
    const e = T0 / 1000 + 60;
    expect(invalid(signed({ a: 1, s: null, e })).message).toMatch(/not valid/);
    invalid(signed({ a: 1, s: 'sold', e }), SOLD);
  });

  it('during a rotation, verifies cursors signed with the previous (or the staged next) value and signs with the current one', () => {
    const PREVIOUS = 'previous-cursor-secret-0123456789';
    const NEXT = 'next-cursor-secret-0123456789';
    // A container that read the secret before the rotation: it signs with what is now the previous value.
    const before = cursorCodec({ keys: { current: PREVIOUS }, now: () => T0 });
    const rotated = cursorCodec({ keys: { current: SECRET, accepted: [PREVIOUS] }, now: () => T0 });
    const old = before.make({ id: 9 }, ALL);
    expect(rotated.read(old, ALL)).toEqual({ id: 9 });
    // What the rotated container signs is signed with the current value, which alone verifies it.
    const fresh = rotated.make({ id: 10 }, ALL);
    expect(codec.read(fresh, ALL)).toEqual({ id: 10 });
    expect(fresh.split('.')[1]).toBe(
      signed({ a: 10, r: 'listPets', f: ALL.filters, e: T0 / 1000 + CURSOR_TTL_SECONDS }).split('.')[1],
    );
    expect(() => before.read(fresh, ALL)).toThrow(/not valid/);
    // A container that already holds a staged next value verifies what is signed with it once it is promoted.
    const staged = cursorCodec({ keys: { current: SECRET, accepted: [NEXT, PREVIOUS] }, now: () => T0 });
    const promoted = cursorCodec({ keys: { current: NEXT, accepted: [SECRET] }, now: () => T0 });
    expect(staged.read(promoted.make({ id: 11 }, ALL), ALL)).toEqual({ id: 11 });
    expect(promoted.read(staged.make({ id: 12 }, ALL), ALL)).toEqual({ id: 12 });
    // A value that is none of them is still refused.
    expect(() =>
      rotated.read(signed({ a: 7, r: 'listPets', f: ALL.filters, e: 2e9 }, 'another-secret-0123456789'), ALL),
    ).toThrow(/not valid/);
  });

  it('needs a secret', () => {
    expect(() => cursorCodec({ keys: { current: SECRET, accepted: [''] }, now: Date.now })).toThrow(/secret/);
    expect(() => cursorCodec({ keys: { current: '' }, now: Date.now })).toThrow(/secret/);
  });
});
