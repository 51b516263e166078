/**
 * What a banned key's Deny tells the client: the authorizer's context values (domain/keys.ts denyContext) and the
 * ACCESS_DENIED gateway response that maps them, as the stack writes it and as the local gateway renders it, the
 * Deny without those values (a cached answer from an authorizer before them) included; an admin's ban is told as an
 * admin's. And what a refused quota tells it: every Allow's quota values (quotaContext), exact for a key whose day is
 * spent, the static fallback for any other, mapped by the QUOTA_EXCEEDED response.
 */
import { describe, expect, it } from 'vitest';
import { DENY_CONTEXT, QUOTA_CONTEXT } from '../../contract/deny-context.ts';
import { GATEWAY_RESPONSES } from '../../contract/gateway-responses.ts';
import { BAN_POLICY, banSecondsFor } from '../../contract/plans.ts';
import { denyContext, quotaContext } from '../../lambdas/domain/keys.ts';
import { errorBodyTemplate, responseHeadersOf } from '../../lib/constructs/gateway-responses.ts';
import { GatewayResponses, gatewayResponseHeaders } from '../../lib/local/responses.ts';

const now = Date.UTC(2032, 6, 1, 12, 0, 0) / 1000;
const TTL = 60;

describe('denyContext: when the Deny says the key is served again', () => {
  it("gives a long ban's exact rest and end", () => {
    const ban = now + banSecondsFor(3) - 100;
    expect(denyContext(ban, now, TTL)).toEqual({
      denyRetryAfter: ban - now,
      denyUntil: ban,
      denyUntilIso: new Date(ban * 1000).toISOString(),
      denyMessage: `The API key is banned until ${new Date(ban * 1000).toISOString()} for repeated requests over its rate limit.`,
    });
  });

  it("says an admin's ban is an administrator's, not the rate limit's", () => {
    const ban = now + 1800;
    expect(denyContext(ban, now, TTL, 'admin')).toMatchObject({
      denyRetryAfter: 1800,
      denyMessage: `The API key is banned by an administrator until ${new Date(ban * 1000).toISOString()}.`,
    });
  });

  it('gives the cached Deny’s end when the ban ends before it: the cached answer refuses the key until then', () => {
    expect(denyContext(now + 5, now, TTL)).toMatchObject({ denyRetryAfter: TTL, denyUntil: now + TTL });
    // Without a cache, the ban's rest alone.
    expect(denyContext(now + 5, now, 0)).toMatchObject({ denyRetryAfter: 5, denyUntil: now + 5 });
  });

  it('never tells a client to come back before the refusal ends, however old the replayed answer', () => {
    for (const rest of [1, 30, 59, 60, 61, BAN_POLICY.banSeconds, BAN_POLICY.maxBanSeconds]) {
      const made = now;
      const c = denyContext(made + rest, made, TTL);
      const refusedUntil = Math.max(made + rest, made + TTL); // the ban, or the cached Deny, whichever ends last
      for (const age of [0, 1, TTL / 2, TTL - 1]) {
        const comesBack = made + age + Number(c.denyRetryAfter);
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

  it('maps Retry-After and X-RateLimit-Reset from the authorizer context, not a fixed value', () => {
    expect(params).toMatchObject({
      'gatewayresponse.header.Retry-After': `context.authorizer.${DENY_CONTEXT.retryAfter}`,
      'gatewayresponse.header.X-RateLimit-Reset': `context.authorizer.${DENY_CONTEXT.until}`,
    });
    expect(Object.values(params).filter((v) => v === `'${BAN_POLICY.banSeconds}'`)).toEqual([]);
  });

  it('renders the Deny’s values into the headers and the message (numbers stringified, as API Gateway does)', () => {
    const ban = now + banSecondsFor(2);
    const a = responses.answer('ACCESS_DENIED', request, { keyId: 'k', ...denyContext(ban, now, TTL) });
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({ 'Retry-After': String(banSecondsFor(2)), 'X-RateLimit-Reset': String(ban) });
    expect(JSON.parse(a.body)).toEqual({
      code: 'key_banned',
      status: 429,
      message: `The API key is banned until ${new Date(ban * 1000).toISOString()} for repeated requests over its rate limit.`,
    });
  });

  it("tells an admin's ban as an administrator's", () => {
    const ban = now + 600;
    const a = responses.answer('ACCESS_DENIED', request, { keyId: 'k', ...denyContext(ban, now, TTL, 'admin') });
    expect(JSON.parse(a.body)).toMatchObject({
      code: 'key_banned',
      message: `The API key is banned by an administrator until ${new Date(ban * 1000).toISOString()}.`,
    });
    expect(a.headers).toMatchObject({ 'Retry-After': '600', 'X-RateLimit-Reset': String(ban) });
  });

  it('without those values (an older cached Deny) sends no Retry-After or Reset, and still the Error object', () => {
    const a = responses.answer('ACCESS_DENIED', request, { keyId: 'k' });
    expect(a.headers['Retry-After']).toBeUndefined();
    expect(a.headers['X-RateLimit-Reset']).toBeUndefined();
    expect(a.headers).toMatchObject({ 'X-RateLimit-Remaining': '0', 'Cache-Control': 'no-store' });
    expect(JSON.parse(a.body)).toMatchObject({ code: 'key_banned', status: 429 });
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
  const { params, responses } = asDeployed('QUOTA_EXCEEDED');
  const ask = Date.UTC(2032, 6, 1, 18, 30, 0) / 1000;
  const dayEnd = Date.UTC(2032, 6, 2) / 1000;

  it('maps X-RateLimit-Limit, X-RateLimit-Reset and Retry-After from the Allow; Remaining is a static 0', () => {
    expect(params).toEqual(
      expect.objectContaining({
        'gatewayresponse.header.X-RateLimit-Limit': `context.authorizer.${QUOTA_CONTEXT.limit}`,
        'gatewayresponse.header.X-RateLimit-Reset': `context.authorizer.${QUOTA_CONTEXT.reset}`,
        'gatewayresponse.header.Retry-After': `context.authorizer.${QUOTA_CONTEXT.retryAfter}`,
        'gatewayresponse.header.X-RateLimit-Remaining': "'0'",
      }),
    );
  });

  it("tells a key whose day is spent its day limit, the day's end and the seconds until then", () => {
    const a = responses.answer('QUOTA_EXCEEDED', request, { keyId: 'k', ...quotaContext('spent', 1000, ask) });
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({
      'X-RateLimit-Limit': '1000',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(dayEnd),
      'Retry-After': String(dayEnd - ask),
    });
    expect(JSON.parse(a.body)).toMatchObject({ code: 'quota_exceeded', status: 429 });
  });

  it("tells any other key's refused quota (a pool member's) the static values", () => {
    for (const decision of ['count', 'probation'] as const) {
      const a = responses.answer('QUOTA_EXCEEDED', request, { keyId: 'k', ...quotaContext(decision, 1000, ask) });
      expect(a.headers).toMatchObject({
        'X-RateLimit-Limit': '0',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '0',
        'Retry-After': '3600',
      });
    }
  });
});
