/**
 * Keys that carry their own check (domain/keys.ts): what the form accepts and refuses, and what the authorizer's
 * refusal of a forged token leaves in the logs (the Lambda runtime logs a failure's stack, once per denied token).
 */
import { describe, expect, it } from 'vitest';
import { BEARER_PATTERN } from '../../contract/auth.ts';
import { CHECKED_KEY, authenticate, generateKey, keyForm } from '../../lambdas/domain/keys.ts';
import { authorizerHandler, unauthorizedError } from '../../lambdas/handlers/authorizer.ts';
import type { Runtime } from '../../lambdas/shared/runtime.ts';

describe('keyForm', () => {
  it('issues keys of the checked form that pass their check and the bearer pattern', () => {
    for (let i = 0; i < 200; i++) {
      const k = generateKey();
      expect(k.startsWith(CHECKED_KEY.prefix)).toBe(true);
      expect(k).toHaveLength(54);
      expect(keyForm(k)).toBe('checked');
      expect(BEARER_PATTERN.test(`Bearer ${k}`)).toBe(true);
    }
  });

  it('calls a token of the checked form with any character changed, added or dropped forged', () => {
    const k = generateKey();
    for (let i = CHECKED_KEY.prefix.length; i < k.length; i++) {
      const c = k[i] === 'A' ? 'B' : 'A';
      expect(keyForm(`${k.slice(0, i)}${c}${k.slice(i + 1)}`), `position ${i}`).toBe('forged');
    }
    expect(keyForm(`${k}A`)).toBe('forged');
    expect(keyForm(k.slice(0, -1))).toBe('forged');
  });

  it('leaves only the exact shape of keys issued before the check to the lookup, while the stage accepts it', () => {
    expect(keyForm(`ask_${'a'.repeat(43)}`)).toBe('unchecked');
    expect(keyForm(`ask_${'a-_Z9'.repeat(8)}aaa`)).toBe('unchecked');
    // Any other shape is no key anyone was issued: refused without a read.
    for (const other of [
      'free_0123456789abcdef0123456789abcdef',
      `ask_${'a'.repeat(42)}`,
      `ask_${'a'.repeat(44)}`,
      `ASK_${'a'.repeat(43)}`,
      `ask-${'a'.repeat(43)}`,
      'x'.repeat(47),
    ])
      expect(keyForm(other), other).toBe('forged');
    // Once the stage refuses the old form, its exact shape too.
    expect(keyForm(`ask_${'a'.repeat(43)}`, 'refused')).toBe('forged');
    const k = generateKey();
    expect(keyForm(k, 'refused')).toBe('checked');
  });

  it('authenticate refuses a forged token without asking the store', async () => {
    const store = {
      getByHash: () => {
        throw new Error('read');
      },
    };
    const k = generateKey();
    const bad = `${k.slice(0, -1)}${k.endsWith('A') ? 'B' : 'A'}`;
    const now = Date.UTC(2033, 0, 1) / 1000;
    await expect(authenticate(store, `Bearer ${bad}`, 'staging', now)).resolves.toBeUndefined();
    await expect(authenticate(store, 'Bearer free_0123456789abcdef0123456789abcdef', 'staging', now)).resolves.toBe(
      undefined,
    );
    const old = `ask_${'a'.repeat(43)}`;
    await expect(authenticate(store, `Bearer ${old}`, 'staging', now, 'refused')).resolves.toBeUndefined();
  });
});

describe("the authorizer's refusal", () => {
  it('is exactly "Unauthorized" with a one-line stack, thrown before any read', async () => {
    const counted: string[] = [];
    const rt = {
      config: { STAGE: 'staging' },
      telemetry: { begin: () => {}, add: (m: string) => counted.push(m), flush: () => {} },
      now: () => Date.now(),
      // No storage at all: a forged token must not need it.
    } as unknown as Runtime;
    const k = generateKey();
    const forged = `${k.slice(0, 10)}${k[10] === 'A' ? 'B' : 'A'}${k.slice(11)}`;
    const err = await authorizerHandler(rt)({
      type: 'TOKEN',
      authorizationToken: `Bearer ${forged}`,
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/v1/GET/pets',
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('Unauthorized');
    expect((err as Error).stack?.split('\n')).toHaveLength(1);
    expect(counted).toEqual(['AuthorizerDenied']);
    expect(unauthorizedError().stack).toBe('Error: Unauthorized');
  });
});
