/**
 * The admin tool end to end against DynamoDB Local (its --local target, with the local gateway serving the keys it
 * writes). Its API Gateway calls are in admin-gateway.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { type TestApi } from '../helpers/api.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';

let api: TestApi;
let localDeps: AdminDeps;

const admin = (...args: string[]) => runLocalAdmin(localDeps, ...args);
const json = async (...args: string[]) => {
  const r = await admin(...args, '--json');
  expect(r.err).toBe('');
  return JSON.parse(r.out);
};
const limitOf = async (key: string) => (await api.call('/pets', { key })).headers.get('x-ratelimit-limit');

beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

describe('admin tool on DynamoDB Local', () => {
  it('creates a Pro key the API accepts with limit 300, moves it between plans, rotates and revokes it', async () => {
    const created = await json('keys', 'create', '--owner', 'acme', '--plan', 'pro');
    expect(created).toMatchObject({
      owner: 'acme',
      plan: 'pro',
      status: 'active',
      limits: { perMinute: 300, perDay: 10_000 },
    });
    expect(created.key).toMatch(/^ask2_[A-Za-z0-9_-]{49}$/); // the checked form (domain/keys.ts generateKey)
    expect(created).not.toHaveProperty('hash');
    expect(await limitOf(created.key)).toBe('300');

    const human = await admin('keys', 'show', created.keyId);
    expect(human.out).toContain(created.keyId);
    expect(human.out).not.toContain(created.key);

    expect(
      await json('keys', 'set-plan', created.keyId, 'enterprise', '--per-minute', '7', '--per-day', '70'),
    ).toMatchObject({
      plan: 'enterprise',
      limits: { perMinute: 7, perDay: 70 },
    });
    expect(await limitOf(created.key)).toBe('7');
    expect(await json('keys', 'set-plan', created.keyId, 'free')).toMatchObject({
      plan: 'free',
      limits: { perMinute: 60 },
    });
    expect(await limitOf(created.key)).toBe('60');

    const usage = await json('keys', 'usage', created.keyId);
    expect(usage.day.count).toBe(3);

    const rotated = await json('keys', 'rotate', created.keyId);
    expect(rotated.keyId).toBe(created.keyId);
    expect(rotated.key).not.toBe(created.key);
    expect((await api.call('/pets', { key: created.key })).status).toBe(401);
    expect((await api.call('/pets', { key: rotated.key })).status).toBe(200);

    expect(await json('keys', 'revoke', created.keyId)).toMatchObject({ status: 'revoked' });
    expect((await api.call('/pets', { key: rotated.key })).status).toBe(401);
    const listed = (await json('keys', 'list', '--owner', 'acme')).keys;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ keyId: created.keyId, status: 'revoked' });
  });

  it.each([
    [['keys', 'create', '--plan', 'pro'], /--owner is required/],
    [['keys', 'create', '--owner', 'x', '--plan', 'gold'], /unknown plan "gold"/],
    [['keys', 'create', '--owner', 'x', '--plan', 'enterprise'], /needs --per-minute/],
    [
      ['keys', 'create', '--owner', 'x', '--plan', 'enterprise', '--per-minute=-5', '--per-day', '10'],
      /--per-minute must be/,
    ],
    [['keys', 'create', '--owner', 'x', '--plan', 'pro', '--per-minute', '5'], /enterprise plan only/],
    // What one key can be served: one method's part of API Gateway's 10,000 requests/s per account (150,000 a minute).
    [
      ['keys', 'create', '--owner', 'x', '--plan', 'enterprise', '--per-minute', '600000', '--per-day', '2000000'],
      /--per-minute 600,000 is more than one key can be served: at most 150,000 \(API Gateway admits 10,000 requests\/s per account and Region, split over the stage's 4 methods/,
    ],
    [
      ['keys', 'create', '--owner', 'x', '--plan', 'enterprise', '--per-minute', '150000', '--per-day', '1000000000'],
      /--per-day 1,000,000,000 is more than one key can be served: at most 216,000,000/,
    ],
    [['keys', 'show', 'key_missing'], /no key with id key_missing/],
    [['keys', 'revoke'], /needs a key id/],
    [['keys', 'explode'], /unknown command/],
  ])('rejects %j with one clear line and a non-zero exit', async (args, message) => {
    const before = (await json('keys', 'list')).keys.length;
    const r = await admin(...args);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(message);
    expect(r.err.split('\n')).toHaveLength(1);
    expect((await json('keys', 'list')).keys.length).toBe(before);
  });

  it('refuses to run without exactly one target', async () => {
    const err: string[] = [];
    const code = await runAdmin(
      ['keys', 'list'],
      { out: () => undefined, err: (l) => err.push(l) },
      async () => localDeps,
    );
    expect(code).toBe(1);
    expect(err[0]).toMatch(/--local or --stage/);
  });
});
