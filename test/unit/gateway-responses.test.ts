/**
 * Gateway responses and MOCK integrations as API Gateway builds them from a template (Developer Guide, "Gateway
 * response types" and "Set up mock integrations"): an uncustomised type falls back to DEFAULT_4XX/5XX, whose status
 * code then replaces the type's own; `$context` references are rendered; a MOCK's passthrough behaviour decides what
 * a body with no matching request template does.
 */
import { describe, expect, it } from 'vitest';
import { GatewayResponses } from '../../lib/local/responses.ts';
import { runMock } from '../../lib/local/mock.ts';
import type { GatewayResponseDef, MockMethod } from '../../lib/local/template.ts';

const facts = {
  requestId: 'req-1',
  sourceIp: '127.0.0.1',
  httpMethod: 'GET',
  path: '/pets',
  resourcePath: '/pets',
  stage: 'v1',
};

describe('gateway responses', () => {
  const responses = new GatewayResponses(
    new Map<string, GatewayResponseDef>([
      [
        'THROTTLED',
        {
          statusCode: 429,
          headers: { 'Retry-After': '1' },
          templates: {
            'application/json':
              '{"message":$context.error.messageString,"id":"$context.requestId","type":"$context.error.responseType"}',
          },
        },
      ],
      ['DEFAULT_4XX', { statusCode: 400, headers: {}, templates: { 'application/json': '{"code":"bad_request"}' } }],
    ]),
  );

  it('renders $context references of a customised type', () => {
    const a = responses.answer('THROTTLED', facts);
    expect(a.status).toBe(429);
    expect(a.headers).toMatchObject({ 'Retry-After': '1', 'Content-Type': 'application/json' });
    expect(JSON.parse(a.body)).toEqual({ message: 'Too Many Requests', id: 'req-1', type: 'THROTTLED' });
  });

  it("answers an uncustomised 4xx type with DEFAULT_4XX, DEFAULT_4XX's status code included", () => {
    expect(responses.answer('RESOURCE_NOT_FOUND', facts)).toMatchObject({
      status: 400,
      body: '{"code":"bad_request"}',
    });
  });

  it("answers with AWS's default when neither the type nor its DEFAULT_5XX is customised", () => {
    expect(responses.answer('AUTHORIZER_FAILURE', facts)).toMatchObject({
      status: 500,
      body: '{"message":"Internal server error"}',
    });
  });

  it('refuses at start-up a template using syntax the emulator does not render', () => {
    expect(
      () =>
        new GatewayResponses(
          new Map([['THROTTLED', { headers: {}, templates: { 'application/json': '#set($x = 1)' } }]]),
        ),
    ).toThrow(/not emulated/);
    expect(
      () =>
        new GatewayResponses(
          new Map([['THROTTLED', { headers: {}, templates: { 'application/json': '$context.nope' } }]]),
        ),
    ).toThrow(/not emulated/);
  });
});

describe('MOCK integration', () => {
  const mock = (passthrough: MockMethod['passthrough']): MockMethod => ({
    kind: 'mock',
    httpMethod: 'ANY',
    resourcePath: '/pets',
    apiKeyRequired: false,
    passthrough,
    requestTemplates: { 'application/json': '{"statusCode": 200}' },
    responses: [
      {
        statusCode: 405,
        headers: { Allow: 'GET, POST' },
        templates: { 'application/json': '{"code":"method_not_allowed"}' },
      },
    ],
  });

  it('answers the default integration response for a JSON (or untyped) request', () => {
    for (const type of ['application/json; charset=utf-8', undefined]) {
      expect(runMock(mock('NEVER'), type, 'x')).toEqual({
        kind: 'response',
        status: 405,
        headers: { Allow: 'GET, POST' },
        body: '{"code":"method_not_allowed"}',
      });
    }
  });

  it('passes an unmatched body through under WHEN_NO_MATCH, where a non-JSON body fails the mock (500)', () => {
    expect(runMock(mock('WHEN_NO_MATCH'), 'text/plain', 'hello')).toEqual({ kind: 'gateway', type: 'DEFAULT_5XX' });
  });

  it('answers 415 under NEVER or WHEN_NO_TEMPLATES when no template matches', () => {
    expect(runMock(mock('NEVER'), 'text/plain', 'hello')).toEqual({ kind: 'gateway', type: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(runMock(mock('WHEN_NO_TEMPLATES'), 'text/plain', 'hello')).toEqual({
      kind: 'gateway',
      type: 'UNSUPPORTED_MEDIA_TYPE',
    });
  });

  it("reads CDK's CORS preflight template, whose statusCode key is unquoted", () => {
    const preflight = { ...mock('NEVER'), requestTemplates: { 'application/json': '{ statusCode: 200 }' } };
    expect(runMock(preflight, undefined, '')).toMatchObject({ kind: 'response', status: 405 });
  });
});
