/**
 * Admin commands racing each other, the functions and the network, on DynamoDB Local: every record write is
 * conditional on the version read, and on what it read of the key's standing and counters, so a revoke or set-plan
 * landing in the middle of a rotation is never undone, nor a ban a function writes in the middle of an unban; and a
 * write the SDK resends after losing its answer recognises its own earlier success instead of failing.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { keyAdmin } from '../../lib/admin/service.ts';
import { localAdminFixture } from '../helpers/admin.ts';
import { interleaved } from '../helpers/admin-interleaved.ts';

const local = localAdminFixture();

/**
 * Runs `run` while every DynamoDB request of the named operation, sent by the admin's own client, is answered by
 * `answer` (which gets the function that really sends it) instead of by DynamoDB directly.
 */
async function intercepted<T>(
  operation: RegExp,
  answer: (send: () => Promise<unknown>) => Promise<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const { ddb } = local.deps.storage!;
  const name = 'test-intercepted';
  ddb.middlewareStack.add(
    (next, context) => async (args) =>
      operation.test(String(context.commandName)) ? ((await answer(() => next(args))) as never) : next(args),
    { step: 'finalizeRequest', name, priority: 'low' },
  );
  try {
    return await run();
  } finally {
    ddb.middlewareStack.remove(name);
  }
}

/**
 * Every DynamoDB request of the named operation reaches DynamoDB, but no answer comes back: each attempt times out,
 * the SDK resends (DynamoDB drops a repeated transaction by its ClientRequestToken), and finally gives up.
 */
const neverAnswered = <T>(operation: RegExp, run: () => Promise<T>): Promise<T> =>
  intercepted(
    operation,
    async (send) => {
      await send();
      throw Object.assign(new Error('socket timed out (test)'), { name: 'TimeoutError' });
    },
    run,
  );

/**
 * Sends every DynamoDB request of the named operation twice and answers with the second reply: the first is applied
 * and its answer lost, the second is the SDK's retry of the same request (what a timed-out attempt leads to).
 */
const answerLost = <T>(operation: RegExp, run: () => Promise<T>): Promise<T> =>
  intercepted(
    operation,
    async (send) => {
      await send();
      return send();
    },
    run,
  );

describe('admin races', () => {
  it('a revoke landing while a rotation is under way stays revoked: the rotation gives up, no secret works', async () => {
    const admin = keyAdmin(local.deps);
    const { key, record } = await admin.create({ owner: 'race-revoke', plan: 'pro' });
    const racing = keyAdmin(interleaved(local.deps, (id) => admin.revoke(id)));
    await expect(racing.rotate(record.keyId)).rejects.toThrow(/revoked: only active keys can be rotated/);
    expect((await admin.show(record.keyId)).status).toBe('revoked');
    expect(await local.status(key)).toBe(401);
    expect((await admin.list({ owner: 'race-revoke' })).keys).toHaveLength(1);
  });

  it('a set-plan landing while a rotation is under way is kept: the new secret has the new plan', async () => {
    const admin = keyAdmin(local.deps);
    const { key, record } = await admin.create({ owner: 'race-plan', plan: 'pro' });
    const racing = keyAdmin(interleaved(local.deps, (id) => admin.setPlan(id, { plan: 'business' })));
    const rotated = await racing.rotate(record.keyId);
    expect(rotated.record.plan).toBe('business');
    expect(await admin.show(record.keyId)).toMatchObject({ plan: 'business', status: 'active' });
    expect(await local.status(key)).toBe(401);
    const res = await local.api.call('/pets', { key: rotated.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('a rotation landing while a set-plan is under way: both apply, in either order', async () => {
    const admin = keyAdmin(local.deps);
    const { record } = await admin.create({ owner: 'race-plan2', plan: 'free' });
    let rotatedKey = '';
    const racing = keyAdmin(interleaved(local.deps, async (id) => (rotatedKey = (await admin.rotate(id)).key)));
    expect(await racing.setPlan(record.keyId, { plan: 'pro' })).toMatchObject({ plan: 'pro' });
    expect((await local.api.call('/pets', { key: rotatedKey })).headers.get('x-ratelimit-limit')).toBe('300');
  });

  it('a rotation whose answer was lost and resent by the SDK succeeds once: the new secret works, the old does not', async () => {
    const admin = keyAdmin(local.deps);
    const { key, record } = await admin.create({ owner: 'race-retry', plan: 'pro' });
    const rotated = await answerLost(/TransactWrite/, () => admin.rotate(record.keyId));
    expect(await local.status(rotated.key)).toBe(200);
    expect(await local.status(key)).toBe(401);
    expect((await admin.list({ owner: 'race-retry' })).keys).toHaveLength(1);
  });

  it('a rotation applied whose answers never came back (the SDK gave up) is recognised as done, not reported failed', async () => {
    const admin = keyAdmin(local.deps);
    const { key, record } = await admin.create({ owner: 'race-timeout', plan: 'pro' });
    const rotated = await neverAnswered(/TransactWrite/, () => admin.rotate(record.keyId));
    expect(await local.status(rotated.key)).toBe(200);
    expect(await local.status(key)).toBe(401);
    expect(await admin.show(record.keyId)).toMatchObject({ status: 'active', rotatedAt: expect.any(String) });
    // A revoke whose answer never comes back either: applied, and reported as done.
    expect(await neverAnswered(/UpdateItem|UpdateCommand/, () => admin.revoke(record.keyId))).toMatchObject({
      status: 'revoked',
    });
    expect(await local.status(rotated.key)).toBe(401);
  });

  it("a ban the limiter writes between an unban's read and its write is not undone: the unban reads again", async () => {
    let now = Date.UTC(2036, 4, 5, 12);
    const admin = keyAdmin({ ...local.deps, now: () => now });
    const { record } = await admin.create({ owner: 'race-unban', plan: 'pro' });
    const w = windowsAt(now);
    const counters = (banUntil: number) =>
      local.deps.storage!.doc.send(
        new PutCommand({
          TableName: local.deps.storage!.tables.state,
          Item: { ...shardKey(record.keyId, w.dayStart, 0), ms: w.minuteStart, m: 0, d: 10, banUntil },
        }),
      );
    await counters(w.nowSec + 600);
    // The limiter bans the key again, longer, after the unban read the counters and before its transaction.
    const later = w.nowSec + 1_800;
    let first = true;
    const unbanned = await intercepted(
      /TransactWrite/,
      async (send) => {
        if (first) {
          first = false;
          await counters(later);
        }
        return send();
      },
      () => admin.unban(record.keyId),
    );
    expect(unbanned.wasBannedUntil).toBe(new Date((w.nowSec + 600) * 1000).toISOString());
    expect((await admin.usage(record.keyId)).bannedUntil).toBe(new Date(later * 1000).toISOString());
    now += 1_000;
    expect((await admin.show(record.keyId)).bannedUntil).toBe(new Date(later * 1000).toISOString());
  });

  it('a revoke, a set-plan and a create whose answers were lost and resent succeed, applied once', async () => {
    const admin = keyAdmin(local.deps);
    const created = await answerLost(/Put/, () => admin.create({ owner: 'race-retry2', plan: 'free' }));
    expect(await local.status(created.key)).toBe(200);
    expect(await answerLost(/TransactWrite/, () => admin.setPlan(created.record.keyId, { plan: 'pro' }))).toMatchObject(
      {
        plan: 'pro',
        // The change, applied once: the key's version 2.
        version: 2,
      },
    );
    expect(await answerLost(/TransactWrite/, () => admin.revoke(created.record.keyId))).toMatchObject({
      status: 'revoked',
      version: 3,
    });
    expect(await local.status(created.key)).toBe(401);
  });
});
