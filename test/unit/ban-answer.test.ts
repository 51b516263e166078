/**
 * What a Deny tells the client: the authorizer's context values (domain/refusal.ts denyContext) for a banned key and for
 * a key whose day is spent, and the ACCESS_DENIED gateway response that maps them into its code, message,
 * X-RateLimit-Limit, X-RateLimit-Reset and Retry-After, as the stack writes it and as the local gateway renders it;
 * an admin's ban is told as an admin's. QUOTA_EXCEEDED (no usage plan has a quota) stays static.
 */
import { describe, expect, it } from 'vitest';
import { DENY_CONTEXT, banMessage, quotaMessage } from '../../contract/deny-context.ts';
import { GATEWAY_RESPONSES } from '../../contract/gateway-responses.ts';
import { BAN_POLICY, banSecondsFor } from '../../contract/plans.ts';
import type { Standing } from '../../lambdas/domain/keys.ts';
import { denyContext } from '../../lambdas/domain/refusal.ts';
import { errorBodyTemplate, responseHeadersOf } from '../../lib/constructs/gateway-responses.ts';
import { GatewayResponses, gatewayResponseHeaders } from '../../lib/local/responses.ts';

const now = Date.UTC(2032, 6, 1, 12, 0, 0) / 1000;
const dayEnd = Date.UTC(2032, 6, 2) / 1000;
const TTL = 60;
const pro = { perMinute: 300, perDay: 10_000 };
const banned = (until: number, by?: Standing['bannedBy']) =>
  denyContext('banned', pro, { bannedUntil: until, ...(by ? { bannedBy: by } : {}) }, now, TTL);

describe('denyContext: what the Deny says, and when the key is served again', () => {
  it("gives a long ban's code, minute limit, exact rest and end", () => {
    const ban = now + banSecondsFor(3) - 100;
    expect(banned(ban)).toEqual({
      [DENY_CONTEXT.code]: 'key_banned',
      [DENY_CONTEXT.limit]: 300,
      [DENY_CONTEXT.retryAfter]: ban - now,
      [DENY_CONTEXT.until]: ban,
      [DENY_CONTEXT.untilIso]: new Date(ban * 1000).toISOString(),
      [DENY_CONTEXT.message]: banMessage(ban, 'limiter'),
    });
  });

  it("says an admin's ban is an administrator's, not the rate limit's", () => {
    const ban = now + 1800;
    expect(banned(ban, 'admin')).toMatchObject({
      [DENY_CONTEXT.retryAfter]: 1800,
      [DENY_CONTEXT.message]: `The API key is banned by an administrator until ${new Date(ban * 1000).toISOString()}.`,
    });
  });

  it("gives a spent day's code, day limit, the day's end and the seconds until then", () => {
    expect(denyContext('spent', pro, { spentDay: dayEnd - 86_400 }, now, TTL)).toEqual({
      [DENY_CONTEXT.code]: 'quota_exceeded',
      [DENY_CONTEXT.limit]: 10_000,
      [DENY_CONTEXT.retryAfter]: dayEnd - now,
      [DENY_CONTEXT.until]: dayEnd,
      [DENY_CONTEXT.untilIso]: new Date(dayEnd * 1000).toISOString(),
      [DENY_CONTEXT.message]: quotaMessage(10_000, dayEnd - now),
    });
  });

  it('gives the cached Deny’s end when the ban ends before it: the cached answer refuses the key until then', () => {
    expect(banned(now + 5)).toMatchObject({ [DENY_CONTEXT.retryAfter]: TTL, [DENY_CONTEXT.until]: now + TTL });
    // Without a cache, the ban's rest alone.
    expect(denyContext('banned', pro, { bannedUntil: now + 5 }, now, 0)).toMatchObject({
      [DENY_CONTEXT.retryAfter]: 5,
      [DENY_CONTEXT.until]: now + 5,
    });
  });

  it('never tells a client to come back before the refusal ends, however old the replayed answer', () => {
    for (const rest of [1, 30, 59, 60, 61, BAN_POLICY.banSeconds, BAN_POLICY.maxBanSeconds]) {
      const c = banned(now + rest);
      const refusedUntil = Math.max(now + rest, now + TTL); // the ban, or the cached Deny, whichever ends last
      for (const age of [0, 1, TTL / 2, TTL - 1]) {
        const comesBack = now + age + Number(c[DENY_CONTEXT.retryAfter]);
        expect(comesBack, `rest ${rest} s, answer ${age} s old`).toBeGreaterThanOrEqual(refusedUntil);
        expect(comesBack - refusedUntil, 'late by the answer’s age at most').toBeLessThanOrEqual(age);
      }
    }
  });
});

/** A gateway response as the stack writes it (header mappings, body template) and the local gateway renders it. */
function asDeployed(type: 'ACCESS_DENIED' | 'QUOTA_EXCEEDED') {
  const spec = GATEWAY_RESPONSES.find((r) => r.type === type)!;
  const params = Object.fromEntries(
    Object.entries(responseHeadersOf(spec)).map(([k, v]) => [`gatewayresponse.header.${k}`, v]),
  );
  const responses = new GatewayResponses(
    new Map([
      [
        type,
        {
          statusCode: spec.status,
          ...gatewayResponseHeaders(type, params),
          templates: { 'application/json': errorBodyTemplate(spec) },
        },
      ],
    ]),
  );
  return { params, responses };
}

const request = {
  requestId: 'r',
  sourceIp: '127.0.0.1',
  httpMethod: 'GET',
  path: '/pets',
  resourcePath: '/pets',
  stage: 'v1',
};

describe('the ACCESS_DENIED gateway response', () => {
  const { params, responses } = asDeployed('ACCESS_DENIED');

  it('maps the code, the message, Retry-After, X-RateLimit-Limit and X-RateLimit-Reset from the Deny', () => {
    expect(params).toMatchObject({
      'gatewayresponse.header.Retry-After': `context.authorizer.${DENY_CONTEXT.retryAfter}`,
      'gatewayresponse.header.X-RateLimit-Limit': `context.authorizer.${DENY_CONTEXT.limit}`,
      'gatewayresponse.header.X-RateLimit-Reset': `context.authorizer.${DENY_CONTEXT.until}`,
      'gatewayresponse.header.X-RateLimit-Remaining': "'0'",
    });
    expect(Object.values(params).filter((v) => v === `'${BAN_POLICY.banSeconds}'`)).toEqual([]);
  });

  it('renders a ban’s values into the headers and the Error object (numbers as strings, as API Gateway does)', () => {
    const ban = now + banSecondsFor(2);
    const a = responses.answer('ACCESS_DENIED', request, { keyId: 'k', ...banned(ban) });
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({
      'Retry-After': String(banSecondsFor(2)),
      'X-RateLimit-Limit': '300',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(ban),
    });
    expect(JSON.parse(a.body)).toEqual({ code: 'key_banned', status: 429, message: banMessage(ban, 'limiter') });
  });

  it("tells an admin's ban as an administrator's", () => {
    const ban = now + 600;
    const a = responses.answer('ACCESS_DENIED', request, { keyId: 'k', ...banned(ban, 'admin') });
    expect(JSON.parse(a.body)).toEqual({ code: 'key_banned', status: 429, message: banMessage(ban, 'admin') });
    expect(a.headers).toMatchObject({ 'Retry-After': '600', 'X-RateLimit-Reset': String(ban) });
  });

  it('tells a spent day as the function does: quota_exceeded, the day limit, the day’s end', () => {
    const a = responses.answer('ACCESS_DENIED', request, {
      keyId: 'k',
      ...denyContext('spent', pro, { spentDay: dayEnd - 86_400 }, now, TTL),
    });
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({
      'Retry-After': String(dayEnd - now),
      'X-RateLimit-Limit': '10000',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(dayEnd),
      'Cache-Control': 'no-store',
    });
    expect(JSON.parse(a.body)).toEqual({
      code: 'quota_exceeded',
      status: 429,
      message: quotaMessage(10_000, dayEnd - now),
    });
  });

  it('refuses at start-up a header mapping the local gateway does not emulate', () => {
    expect(() => gatewayResponseHeaders('X', { 'gatewayresponse.header.A': 'method.request.header.Accept' })).toThrow(
      /emulates static values and context variables/,
    );
    expect(
      () =>
        new GatewayResponses(
          new Map([['ACCESS_DENIED', { headers: {}, contextHeaders: { A: 'nothing.here' }, templates: {} }]]),
        ),
    ).toThrow(/context\.nothing\.here is not emulated/);
  });
});

describe('the QUOTA_EXCEEDED gateway response', () => {
  it('is static: no usage plan has a quota, so nothing of a key maps into it', () => {
    const { params, responses } = asDeployed('QUOTA_EXCEEDED');
    expect(Object.values(params).filter((v) => v.startsWith('context.'))).toEqual([]);
    const a = responses.answer('QUOTA_EXCEEDED', request, { keyId: 'k' });
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({
      'X-RateLimit-Limit': '0',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '0',
    });
    expect(JSON.parse(a.body)).toMatchObject({ code: 'quota_exceeded', status: 429 });
  });
});
