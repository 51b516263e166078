/**
 * Read-only keys and expiry where a request is judged: what the authorizer passes (usableKey, expiryAt), what the
 * function reads of it (authContext), and the envelope's refusal, made before the limiter or any storage call. The
 * envelope runs here against a DynamoDB endpoint nothing listens on: a refusal that reached the limiter would be
 * its 503, not the key's own answer.
 */
import { describe, expect, it } from 'vitest';
import { EXPIRED_NOTICE_SECONDS } from '../../contract/auth.ts';
import { ERROR_CODES } from '../../contract/errors.ts';
import { BASE_PATH, ROUTES, writes, type Route } from '../../contract/routes.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import { expiryAt, usableKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { keyRefusal } from '../../lambdas/domain/refusal.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import { apiHandler } from '../../lambdas/shared/http.ts';
import { authContext } from '../../lambdas/shared/request.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { localTableEnv } from '../../lambdas/storage/provision.ts';

const NOW = Date.UTC(2033, 2, 4, 12) / 1000;

describe('expiryAt: a key is valid before its expiry, told it expired for a day from then, then unknown', () => {
  it('judges at the second', () => {
    expect(expiryAt(undefined, NOW)).toBe('valid');
    expect(expiryAt(0, NOW)).toBe('valid');
    expect(expiryAt(NOW + 1, NOW)).toBe('valid');
    expect(expiryAt(NOW, NOW)).toBe('expired');
    expect(expiryAt(NOW - EXPIRED_NOTICE_SECONDS + 1, NOW)).toBe('expired');
    expect(expiryAt(NOW - EXPIRED_NOTICE_SECONDS, NOW)).toBe('gone');
  });
});

describe('usableKey carries the scope and the expiry into the context, and refuses what it cannot read', () => {
  const record = (extra: Partial<KeyRecord> = {}): KeyRecord => ({
    hash: 'h',
    keyId: 'key_0123456789abcdef',
    owner: 'o',
    plan: 'pro',
    status: 'active',
    createdAt: '2033-03-04T00:00:00.000Z',
    ...extra,
  });

  it('an old record (no scope, no expiry) may do everything, forever', () => {
    expect(usableKey(record(), 'staging')).toMatchObject({ scope: 'all', validUntil: 0 });
  });

  it('a read-only key with an expiry', () => {
    expect(usableKey(record({ scope: 'read', validUntil: NOW }), 'staging')).toMatchObject({
      scope: 'read',
      validUntil: NOW,
    });
  });

  it('an unknown scope or an unreadable expiry is no usable key, never a wider one', () => {
    expect(usableKey(record({ scope: 'admin' as never }), 'staging')).toBeUndefined();
    expect(usableKey(record({ validUntil: '2033-03-04' as never }), 'staging')).toBeUndefined();
    expect(usableKey(record({ validUntil: 1.5 }), 'staging')).toBeUndefined();
  });
});

describe('authContext: what a function reads of the context', () => {
  const event = (ctx: Record<string, unknown>) =>
    ({
      requestContext: { authorizer: { keyId: 'key_x', plan: 'pro', perMinute: '300', perDay: '5000', ...ctx } },
    }) as never;

  it('a context of an authorizer from before scopes is a key that may do everything, forever', () => {
    expect(authContext(event({}))).toMatchObject({ scope: 'all', validUntil: 0 });
  });

  it('reads the values as API Gateway passes them: strings', () => {
    expect(authContext(event({ scope: 'read', validUntil: String(NOW) }))).toMatchObject({
      scope: 'read',
      validUntil: NOW,
    });
    expect(authContext(event({ scope: 'all', validUntil: '0' }))).toMatchObject({ scope: 'all', validUntil: 0 });
  });

  it('narrows what it cannot read: an unknown scope reads only, an unreadable expiry is a 401', () => {
    expect(authContext(event({ scope: 'everything' }))).toMatchObject({ scope: 'read' });
    expect(() => authContext(event({ validUntil: 'soon' }))).toThrow(AppError);
    expect(() => authContext(event({ validUntil: '-1' }))).toThrow(AppError);
  });
});

describe('keyRefusal', () => {
  const call = (r: Route) => ({ changesData: writes(r), method: r.method, path: `${BASE_PATH}${r.path}` });

  it('refuses a read-only key every route that changes data, and no route that reads', () => {
    for (const r of ROUTES) {
      const refusal = keyRefusal({ scope: 'read', validUntil: 0 }, NOW, call(r));
      if (writes(r))
        expect(refusal, r.operationId).toEqual({
          code: 'key_read_only',
          message: `This API key may only read: ${r.method} ${BASE_PATH}${r.path} changes data.`,
        });
      else expect(refusal, r.operationId).toBeUndefined();
      expect(keyRefusal({ scope: 'all', validUntil: 0 }, NOW, call(r)), r.operationId).toBeUndefined();
    }
  });

  it('refuses an expired key from its expiry, on every route, before its scope', () => {
    for (const r of ROUTES) {
      expect(keyRefusal({ scope: 'all', validUntil: NOW + 1 }, NOW, call(r))).toBeUndefined();
      for (const scope of ['all', 'read'] as const)
        expect(keyRefusal({ scope, validUntil: NOW }, NOW, call(r))).toEqual({
          code: 'key_expired',
          message: 'The API key expired at 2033-03-04T12:00:00.000Z.',
        });
    }
  });

  it('the two codes are in the error table with their statuses', () => {
    expect(ERROR_CODES.key_expired.status).toBe(401);
    expect(ERROR_CODES.key_read_only.status).toBe(403);
  });
});

describe('the envelope refuses before its limiter or any storage call', () => {
  const clock = { ms: NOW * 1000 };
  const runtime = createRuntime(
    loadConfig({
      ...localTableEnv('key-scope-expiry'),
      LOG_LEVEL: 'SILENT',
      RATE_LIMITER: 'on',
      // Nothing listens here: the limiter's call, if made, fails and the answer is its 503.
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      DYNAMODB_TIMEOUT_MS: '200',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
    }),
    { write: () => undefined, now: () => clock.ms },
  );
  const run = async (route: Route, ctx: Record<string, unknown>) => {
    let handled = 0;
    const handler = apiHandler(
      runtime,
      // Any route's envelope: the handler is the test's and the body steps are left out (none is sent).
      { ...route, request: {} } as Route,
      async () => {
        handled++;
        return { statusCode: 200, body: [] };
      },
    );
    const res = await handler(
      {
        httpMethod: route.method,
        path: `${BASE_PATH}${route.path}`,
        headers: {},
        requestContext: {
          requestId: 'r1',
          authorizer: { keyId: 'key_x', plan: 'pro', perMinute: 300, perDay: 5000, ...ctx },
        },
      } as never,
      { getRemainingTimeInMillis: () => 10_000 } as never,
    );
    return { res, handled, body: JSON.parse(res.body || '{}') as { code?: string; message?: string } };
  };

  // The refusals themselves come after the limiter's count: test/integration/key-scope-expiry.test.ts, on a real one.
  it('a read-only key on a route that reads goes on to the limiter (here, its unreachable store: 503)', async () => {
    const route = ROUTES.find((r) => !writes(r))!;
    const { res } = await run(route, { scope: 'read', validUntil: NOW + 60 });
    expect(res.statusCode).toBe(503);
  });
});
