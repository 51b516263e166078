/**
 * What a client can make the service say or keep, over HTTP through the local gateway (which answers from the
 * template's gateway responses and MOCK methods, as API Gateway does): error messages echo at most a short piece of
 * a client-chosen name, pet names cannot carry bidirectional overrides into a shared inventory, and every answer the
 * gateway itself gives is marked `Cache-Control: no-store`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const errorOf = async (res: Response) => (await res.json()) as { code: string; message: string; status: number };

it("echoes at most 64 characters of a repeated query parameter's name", async () => {
  const name = 'q'.repeat(3_000); // the URL stays under the gateway's limit (431 beyond)
  const res = await api.call(`/pets?${name}=1&${name}=2`);
  expect(res.status).toBe(400);
  const e = await errorOf(res);
  expect(e.message).toMatch(/given more than once/);
  expect(e.message.length).toBeLessThan(200);
});

it("echoes at most 200 characters of an unknown body field's name", async () => {
  const res = await api.call('/pets', {
    method: 'POST',
    body: JSON.stringify({ name: 'Rex', categoryId: 1, ['f'.repeat(7_000)]: true }),
  });
  expect(res.status).toBe(400);
  const e = await errorOf(res);
  expect(e.message).toContain('ffff');
  expect(e.message.length).toBeLessThan(300);
});

it('refuses pet names with bidirectional overrides or isolates, and stores none', async () => {
  for (const name of ['Rex\u202Egnp.exe', '\u2066admin\u2069']) {
    const res = await api.call('/pets', { method: 'POST', body: JSON.stringify({ name, categoryId: 1 }) });
    expect(res.status, JSON.stringify(name)).toBe(400);
    expect((await errorOf(res)).message).toMatch(/bidirectional/);
  }
  // A right-to-left name without overrides is a name.
  const ok = await api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'שלום', categoryId: 1 }) });
  expect(ok.status).toBe(201);
});

it("marks the gateway's own answers no-store: 401, 404, 405", async () => {
  const answers = [
    await api.call('/pets', { key: '' }),
    await api.call('/pets', { key: 'not a key at all' }),
    await api.call('/nowhere', { key: '' }),
    await api.call('/pets', { method: 'DELETE', key: '' }),
  ];
  expect(answers.map((r) => r.status)).toEqual([401, 401, 404, 405]);
  for (const r of answers) expect(r.headers.get('cache-control'), String(r.status)).toBe('no-store');
});
