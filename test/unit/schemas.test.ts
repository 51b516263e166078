/** The zod schemas: what the service accepts and rejects, and the defaults it applies. */
import { describe, expect, it } from 'vitest';
import { ListPetsQuery, NewPet, Pet, PetIdParam, describeIssues, NAME_MAX_LENGTH } from '../../contract/schemas.ts';

describe('NewPet', () => {
  it('accepts name and categoryId, with an optional known status, and refuses any other field', () => {
    expect(NewPet.parse({ name: 'Rex', categoryId: 1 })).toEqual({ name: 'Rex', categoryId: 1 });
    expect(NewPet.parse({ name: 'Rex', categoryId: 1, status: 'sold' })).toEqual({
      name: 'Rex',
      categoryId: 1,
      status: 'sold',
    });
    expect(NewPet.safeParse({ name: 'Rex', categoryId: 1, status: 'sold', id: 9, extra: true }).success).toBe(false);
    expect(NewPet.parse({ name: 'x'.repeat(NAME_MAX_LENGTH), categoryId: Number.MAX_SAFE_INTEGER }).categoryId).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it.each([
    [{ categoryId: 1 }],
    [{ name: 'Rex' }],
    [{ name: '', categoryId: 1 }],
    [{ name: ' \t', categoryId: 1 }],
    [{ name: 'x'.repeat(NAME_MAX_LENGTH + 1), categoryId: 1 }],
    [{ name: '\ud800', categoryId: 1 }],
    // Bidirectional overrides and isolates: a name that displays as another.
    [{ name: 'Rex\u202E', categoryId: 1 }],
    [{ name: '\u202Axe', categoryId: 1 }],
    [{ name: 'a\u2066b\u2069', categoryId: 1 }],
    [{ name: 'a\u2068b', categoryId: 1 }],
    [{ name: 'Rex', categoryId: 0 }],
    [{ name: 'Rex', categoryId: -3 }],
    [{ name: 'Rex', categoryId: 1.5 }],
    [{ name: 'Rex', categoryId: 2 ** 53 }],
    [{ name: 'Rex', categoryId: '1' }],
    [{ name: 'Rex', categoryId: 1, status: 'lost' }],
    [null],
    [[]],
    ['Rex'],
  ])('rejects %j', (input) => {
    expect(NewPet.safeParse(input).success).toBe(false);
  });

  it('echoes at most 200 characters of an issue, an unknown field name included', () => {
    const r = NewPet.safeParse({ name: 'Rex', categoryId: 1, ['k'.repeat(9_000)]: 1 });
    expect(r.success).toBe(false);
    const text = describeIssues(r.error!);
    expect(text).toContain('kkkk');
    expect([...text].length).toBeLessThanOrEqual(201);
  });

  it('describes failures in one readable sentence', () => {
    const r = NewPet.safeParse({ name: 5 });
    expect(r.success).toBe(false);
    expect(describeIssues(r.error!)).toMatch(/^name: .+; categoryId: .+/);
  });
});

describe('Pet', () => {
  it('requires the id and a status', () => {
    expect(Pet.safeParse({ id: 1, name: 'Rex', categoryId: 1, status: 'available' }).success).toBe(true);
    expect(Pet.safeParse({ name: 'Rex', categoryId: 1, status: 'available' }).success).toBe(false);
  });
});

describe('query and path parameters', () => {
  it('takes limit as a canonical whole number from 1 to 100', () => {
    expect(ListPetsQuery.parse({ limit: '1' }).limit).toBe(1);
    expect(ListPetsQuery.parse({ limit: '100', status: 'pending' })).toEqual({ limit: 100, status: 'pending' });
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '', '01', ' 5', '1e2'])
      expect(ListPetsQuery.safeParse({ limit }).success).toBe(false);
    expect(ListPetsQuery.safeParse({ status: 'lost' }).success).toBe(false);
  });

  it('takes petId as any int64 in canonical decimal: a number when assignable (1 to 2^53-1), else an exact bigint', () => {
    expect(PetIdParam.parse({ petId: '42' }).petId).toBe(42);
    expect(PetIdParam.parse({ petId: '9007199254740991' }).petId).toBe(Number.MAX_SAFE_INTEGER);
    // Valid int64 values the service never assigns: kept exact (2^53 + 1 would round to 2^53 as a number).
    for (const petId of [
      '0',
      '-1',
      '9007199254740992',
      '9007199254740993',
      '9223372036854775807',
      '-9223372036854775808',
    ]) {
      expect(PetIdParam.parse({ petId }).petId).toBe(BigInt(petId));
    }
    for (const petId of [
      '9223372036854775808',
      '-9223372036854775809',
      '99999999999999999999',
      '01',
      '-0',
      '+1',
      '1.0',
      '1e3',
      '0x10',
      ' 1',
      'abc',
      '',
      '١',
    ]) {
      expect(PetIdParam.safeParse({ petId }).success, petId).toBe(false);
    }
  });
});
