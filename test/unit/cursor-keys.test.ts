/**
 * The cursor keys of a stage come from its secret's rotation stages: AWSCURRENT signs, AWSPENDING and AWSPREVIOUS
 * also verify, and a warm container picks up a rotation within the refresh interval. A rotation, step by step,
 * keeps every cursor any container signed readable by every other container.
 */
import { describe, expect, it } from 'vitest';
import { cursorCodec, listingOf } from '../../lambdas/domain/pagination.ts';
import {
  CURSOR_KEYS_REFRESH_MS,
  secretCursorKeys,
  type SecretReader,
  type SecretVersionStage,
} from '../../lambdas/shared/cursor-keys.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorSecret-AbCdEf';
const OLD = 'old-cursor-secret-0123456789abcdef';
const NEW = 'new-cursor-secret-0123456789abcdef';
/** Any list operation's listing: the keys sign and verify whatever a cursor is bound to. */
const LISTING = listingOf({ operationId: 'listThings', path: '/things', request: {} }, {});

/** A secret as Secrets Manager keeps it: each version stage on at most one value. */
function fakeSecret(initial: Partial<Record<SecretVersionStage, string>>) {
  const stages = { ...initial };
  let calls = 0;
  let failing = false;
  const read: SecretReader = async (id, stage) => {
    expect(id).toBe(ARN);
    calls++;
    if (failing) throw new Error('throttled');
    return stages[stage];
  };
  return {
    stages,
    read,
    calls: () => calls,
    fail: (on: boolean) => {
      failing = on;
    },
  };
}

describe('secretCursorKeys', () => {
  it('signs with AWSCURRENT and also verifies with AWSPREVIOUS after a rotation', async () => {
    const secret = fakeSecret({ AWSCURRENT: NEW, AWSPREVIOUS: OLD });
    const keys = await secretCursorKeys(ARN, secret.read, () => 0)();
    expect(keys).toEqual({ current: NEW, accepted: [OLD] });
  });

  it('reads once per refresh interval, however many requests, and re-reads after it', async () => {
    let t = 0;
    const secret = fakeSecret({ AWSCURRENT: OLD });
    const source = secretCursorKeys(ARN, secret.read, () => t);
    await Promise.all([source(), source(), source()]);
    const perRead = secret.calls();
    t += CURSOR_KEYS_REFRESH_MS - 1;
    await source();
    expect(secret.calls()).toBe(perRead);
    t += 1;
    secret.stages.AWSCURRENT = NEW;
    // The refresh runs beside the request, which answers with the keys in hand; the next one has the new keys.
    await expect(source()).resolves.toMatchObject({ current: OLD });
    await new Promise((resolve) => setImmediate(resolve));
    await expect(source()).resolves.toMatchObject({ current: NEW });
    expect(secret.calls()).toBe(2 * perRead);
  });

  it('fails the first read (the cold start) but keeps the keys it has when a later read fails', async () => {
    let t = 0;
    const secret = fakeSecret({ AWSCURRENT: OLD });
    secret.fail(true);
    await expect(secretCursorKeys(ARN, secret.read, () => t)()).rejects.toThrow(/throttled/);
    secret.fail(false);
    const source = secretCursorKeys(ARN, secret.read, () => t);
    await source();
    secret.fail(true);
    t += CURSOR_KEYS_REFRESH_MS;
    await expect(source()).resolves.toEqual({ current: OLD, accepted: [] });
  });

  it('refuses a secret with no usable current value', async () => {
    await expect(secretCursorKeys(ARN, fakeSecret({}).read, () => 0)()).rejects.toThrow(/AWSCURRENT/);
    await expect(secretCursorKeys(ARN, fakeSecret({ AWSCURRENT: 'short' }).read, () => 0)()).rejects.toThrow(
      /AWSCURRENT/,
    );
  });

  it('a rotation as docs/deployment.md runs it never leaves a cursor unreadable, whichever container reads it', async () => {
    let t = 0;
    const secret = fakeSecret({ AWSCURRENT: OLD });
    // Containers (or a canary's two versions) that started at different moments, each with its own cache.
    const containers = [secretCursorKeys(ARN, secret.read, () => t)];
    const made: string[] = [];
    const check = async () => {
      const codecs = await Promise.all(containers.map(async (c) => cursorCodec({ keys: await c(), now: () => t })));
      for (const codec of codecs) made.push(codec.make({ id: made.length + 1 }, LISTING));
      for (const codec of codecs) for (const c of made) expect(codec.read(c, LISTING)).toMatchObject({});
    };
    await check();
    // 1. Stage the new value as AWSPENDING; new containers start meanwhile.
    secret.stages.AWSPENDING = NEW;
    containers.push(secretCursorKeys(ARN, secret.read, () => t));
    await check();
    // 2. Wait longer than the refresh interval: every container now verifies the new value.
    t += CURSOR_KEYS_REFRESH_MS + 1;
    await check();
    // 3. Promote it: AWSCURRENT moves to the new value, the old one becomes AWSPREVIOUS.
    secret.stages.AWSCURRENT = NEW;
    secret.stages.AWSPREVIOUS = OLD;
    containers.push(secretCursorKeys(ARN, secret.read, () => t));
    await check();
    t += CURSOR_KEYS_REFRESH_MS + 1;
    await check();
    const signing = await Promise.all(containers.map((c) => c()));
    expect(signing.map((k) => k.current)).toEqual([NEW, NEW, NEW]);
  });
});
