/**
 * A body's steps in the envelope (lambdas/shared/json-body.ts): the project's checks, then @middy/http-json-body-parser.
 * The parser parses the text the checks read, once; what it refuses comes out as the API's own answers.
 */
import middy from '@middy/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toAppError } from '../../lambdas/shared/http.ts';
import { jsonBody } from '../../lambdas/shared/json-body.ts';

/** Runs a body through the steps alone: the parsed value, or the Error object of what was thrown. */
async function parse(body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const run = middy<{ body: unknown }>()
    .use([...jsonBody])
    .handler(async (event: { body: unknown }) => ({ value: event.body }));
  try {
    return await run({ body, headers, isBase64Encoded: false } as never, {} as never);
  } catch (e) {
    return { error: toAppError(e).toBody() };
  }
}

afterEach(() => vi.restoreAllMocks());

describe('the body steps', () => {
  it('parse an accepted body once, with the JSON parser of the library', async () => {
    const body = '{"name":"Rex","categoryId":1,"tags":{"a":[1,2,{"b":null}]}}';
    const expected = JSON.parse(body) as unknown;
    const spy = vi.spyOn(JSON, 'parse');
    const result = await parse(body, { 'Content-TYPE': 'application/json; charset=utf-8' });
    expect(spy.mock.calls.filter(([text]) => text === body)).toHaveLength(1);
    expect(result).toEqual({ value: expected });
  });

  it('read a base64 body as the text it decodes to', async () => {
    const run = middy<{ body: unknown }>()
      .use([...jsonBody])
      .handler(async (event: { body: unknown }) => event.body);
    const body = Buffer.from('{"name":"Ünï"}').toString('base64');
    expect(
      await run({ body, headers: { 'content-type': 'application/json' }, isBase64Encoded: true } as never, {} as never),
    ).toEqual({ name: 'Ünï' });
  });

  it("answer the parser's refusals as the API does: a prototype key by name, malformed JSON as invalid_json", async () => {
    expect(await parse('{"name":"Rex","constructor":{"prototype":{}}}')).toEqual({
      error: { code: 'validation_failed', message: 'Invalid body: unknown field "constructor".', status: 400 },
    });
    expect(await parse('{"name":"Rex","__proto__":{"x":1}}')).toEqual({
      error: { code: 'validation_failed', message: 'Invalid body: unknown field "__proto__".', status: 400 },
    });
    expect(await parse('{"name":')).toMatchObject({ error: { code: 'invalid_json', status: 400 } });
  });

  it('answer a repeated key in a text that is not JSON as not JSON', async () => {
    expect(await parse('{"a":1,"a":2,}')).toMatchObject({ error: { code: 'invalid_json', status: 400 } });
    expect(await parse('{"a":1,"a":2}')).toMatchObject({
      error: { code: 'validation_failed', message: 'Invalid body: the key "a" is given more than once.' },
    });
  });
});
