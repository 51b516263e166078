/**
 * What a banned key's Deny tells the client: the authorizer's context values (domain/keys.ts denyContext) and the
 * ACCESS_DENIED gateway response that maps them, as the stack writes it and as the local gateway renders it, the
 * Deny without those values (a cached answer from an authorizer before them) included.
 */
import { describe, expect, it } from 'vitest';
import { DENY_CONTEXT } from '../../contract/deny-context.ts';
import { GATEWAY_RESPONSES } from '../../contract/gateway-responses.ts';
import { BAN_POLICY, banSecondsFor } from '../../contract/plans.ts';
import { denyContext } from '../../lambdas/domain/keys.ts';
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

describe('the ACCESS_DENIED gateway response', () => {
  const spec = GATEWAY_RESPONSES.find((r) => r.type === 'ACCESS_DENIED')!;
  const params = Object.fromEntries(
    Object.entries(responseHeadersOf(spec)).map(([k, v]) => [`gatewayresponse.header.${k}`, v]),
  );
  // The local gateway reads what the stack writes: the same header mappings and body template.
  const responses = new GatewayResponses(
    new Map([
      [
        'ACCESS_DENIED',
        {
          statusCode: spec.status,
          ...gatewayResponseHeaders('ACCESS_DENIED', params),
          templates: { 'application/json': errorBodyTemplate(spec) },
        },
      ],
    ]),
  );
  const request = {
    requestId: 'r',
    sourceIp: '127.0.0.1',
    httpMethod: 'GET',
    path: '/pets',
    resourcePath: '/pets',
    stage: 'v1',
  };

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
