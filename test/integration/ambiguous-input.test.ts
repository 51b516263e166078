/**
 * Every ambiguous input gets one documented answer (docs/api.md, "Requests: what is accepted and why"), never a
 * silent guess, and nothing is stored or counted for it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { storedPetsNamed } from '../helpers/pets-table.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 60_000);
afterAll(() => api?.close());

/** Sends raw bytes over one connection and returns the status line's code, the headers and the body. */
function raw(request: Buffer | string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
    let data = '';
    socket.on('data', (d) => (data += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

const post = (body: Buffer | string, headers: Record<string, string> = {}) =>
  api.call('/pets', { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });
const stored = (name: string) => storedPetsNamed(api.storage.ddb, api.tableEnv.PETS_TABLE_NAME!, name);
const remaining = async (key: string) =>
  Number((await api.call('/pets', { key })).headers.get('x-ratelimit-remaining'));

async function refused(res: Response, status: number, code: string, mentions?: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { code: string; message: string; status: number };
  expect(body).toMatchObject({ code, status });
  if (mentions) expect(body.message).toContain(mentions);
}

describe('the body as bytes', () => {
  it('refuses a charset other than UTF-8 with 415 and stores nothing; utf-8 in any spelling is accepted', async () => {
    for (const type of ['application/json; charset=latin1', 'application/json;charset="ISO-8859-1"'])
      await refused(
        await post('{"name":"latin","categoryId":1}', { 'Content-Type': type }),
        415,
        'unsupported_media_type',
        'charset',
      );
    expect(await stored('latin')).toEqual([]);
    expect(
      (await post('{"name":"utf","categoryId":1}', { 'Content-Type': 'application/json; Charset="UTF-8"' })).status,
    ).toBe(201);
  });

  it('refuses bytes that are not UTF-8 with 400 invalid_json and stores nothing', async () => {
    const body = Buffer.concat([
      Buffer.from('{"name":"bad'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","categoryId":1}'),
    ]);
    await refused(await post(body), 400, 'invalid_json', 'UTF-8');
    expect((await stored('bad\uFFFD\uFFFD')).length).toBe(0);
  });

  it('refuses any content coding it does not decode with 415, on any body; identity is no coding', async () => {
    for (const coding of ['gzip', 'br', 'deflate, identity'])
      await refused(
        await post('{"name":"coded","categoryId":1}', { 'Content-Encoding': coding }),
        415,
        'unsupported_media_type',
        'Content-Encoding',
      );
    expect(await stored('coded')).toEqual([]);
    expect((await post('{"name":"plain","categoryId":1}', { 'Content-Encoding': 'identity' })).status).toBe(201);
  });
});

describe('the body as JSON', () => {
  it('refuses an unknown field with 400 naming it, so a misspelt field is never dropped silently', async () => {
    await refused(await post('{"name":"Rex","Status":"sold"}'), 400, 'validation_failed', 'Status');
    await refused(
      await post('{"name":"Rex","categoryId":1,"__proto__":{"x":1}}'),
      400,
      'validation_failed',
      '__proto__',
    );
    expect(await stored('Rex')).toEqual([]);
  });

  it('refuses a key given twice, at any depth, with 400 naming it', async () => {
    await refused(await post('{"name":"a","name":"b","categoryId":1}'), 400, 'validation_failed', '"name"');
    await refused(await post('{"name":"a","categoryId":1,"x":{"k":1,"\\u006b":2}}'), 400, 'validation_failed', '"k"');
    expect([...(await stored('a')), ...(await stored('b'))]).toEqual([]);
  });
});

describe('headers', () => {
  it('answers two Authorization headers with 401 and charges neither key', async () => {
    const [free, pro] = [await remaining(api.keys.free), await remaining(api.keys.pro)];
    const { port } = new URL(api.url);
    const res = await raw(
      `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${api.keys.free}\r\n` +
        `Authorization: Bearer ${api.keys.pro}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthorized', status: 401 });
    // Each `remaining` call is itself one request.
    expect(await remaining(api.keys.free)).toBe(free - 1);
    expect(await remaining(api.keys.pro)).toBe(pro - 1);
  });

  it("answers headers over API Gateway's 10,240 bytes with the Error object and Node's 431", async () => {
    const { port } = new URL(api.url);
    const res = await raw(
      `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(11_000)}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(431);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    // Every answer carries a request id, as the document says.
    expect(res.headers).toMatch(/x-amzn-RequestId: [0-9a-f-]{36}/i);
    expect(JSON.parse(res.body)).toEqual({
      code: 'request_headers_too_large',
      message: expect.any(String),
      status: 431,
    });
  });
});
