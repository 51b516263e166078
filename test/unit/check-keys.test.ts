/**
 * The check keys' secret (lambdas/hooks/check-keys.ts): what the admin tool writes the hook reads back, plan by plan;
 * the old form (one bare key) reads as a secret lacking every plan; anything else is refused with the shape it must
 * have, never repeating what it holds.
 */
import { describe, expect, it } from 'vitest';
import { PLAN_NAMES } from '../../contract/plans.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import {
  CHECK_KEYS_SHAPE,
  checkKeysOf,
  formatCheckKeys,
  issueCheckKeysCommand,
} from '../../lambdas/hooks/check-keys.ts';

const keys = Object.fromEntries(PLAN_NAMES.map((p) => [p, generateKey()]));

describe('checkKeysOf', () => {
  it("reads back what formatCheckKeys writes: every plan's key, none missing", () => {
    const written = formatCheckKeys(keys);
    expect(JSON.parse(written)).toEqual(keys);
    expect(Object.keys(JSON.parse(written))).toEqual([...PLAN_NAMES]);
    expect(checkKeysOf(written)).toEqual({ byPlan: keys, missing: [] });
    // Surrounding whitespace, as a console paste leaves it.
    expect(checkKeysOf(`\n${written}\n`).missing).toEqual([]);
  });

  it('names the plans a secret lacks, in the order plans are sold', () => {
    const { free, enterprise } = keys;
    expect(checkKeysOf(formatCheckKeys({ enterprise, free }))).toEqual({
      byPlan: { free, enterprise },
      missing: ['pro', 'business'],
    });
    expect(checkKeysOf('{}').missing).toEqual([...PLAN_NAMES]);
  });

  it('takes plan names whatever their case (a secret written by hand may say "Enterprise")', () => {
    const byHand = JSON.stringify({
      Free: keys.free,
      PRO: keys.pro,
      Business: keys.business,
      Enterprise: keys.enterprise,
    });
    expect(checkKeysOf(byHand)).toEqual({ byPlan: keys, missing: [] });
  });

  it('reads the old form (one bare key) as lacking every plan, keeping the key for the upgrade', () => {
    const old = generateKey();
    expect(checkKeysOf(`${old}\n`)).toEqual({ byPlan: {}, missing: [...PLAN_NAMES], single: old });
    // The form before checked keys too.
    expect(checkKeysOf('ask_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG').single).toBeDefined();
  });

  it('refuses anything else with the shape it must have, never repeating a key', () => {
    const k = keys.pro!;
    const refusals = [
      'not a key at all',
      `["${k}"]`,
      JSON.stringify({ pro: 42 }),
      JSON.stringify({ pro: '' }),
      JSON.stringify({ pro: `${k} extra` }),
      JSON.stringify({ gold: k }),
      JSON.stringify({ [k]: k }),
      JSON.stringify({ pro: k, Pro: keys.free }),
      `{"pro":"${k}"`,
    ];
    for (const value of refusals) {
      let message = '';
      try {
        checkKeysOf(value);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, value).toMatch(/^the check keys' secret /);
      expect(message).not.toContain(k.slice(5));
      expect(message).not.toContain(keys.free!.slice(5));
    }
    expect(() => checkKeysOf('nope nope')).toThrow(CHECK_KEYS_SHAPE);
    expect(() => checkKeysOf(JSON.stringify({ gold: k }))).toThrow(/"gold", no plan of the stage/);
    expect(() => checkKeysOf(JSON.stringify({ pro: 42 }))).toThrow(/wrong at pro$/);
  });

  it('names the one command that issues them', () => {
    expect(issueCheckKeysCommand('production')).toBe('npm run admin -- keys issue-check-key --stage production');
  });
});
