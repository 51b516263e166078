/**
 * Secrets and hardening: no plaintext key, Authorization header or stack trace in any log line or
 * response body; Cache-Control on authenticated responses, nosniff everywhere; CORS denied unless allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, readsKeys } from '../helpers/clients.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';

let api: TestApi;
const captured: string[] = [];
const bodies: string[] = [];

beforeAll(async () => {
  // The stack synthesized with one allowed origin: its CORS preflight methods and its functions' CORS_ALLOWED_ORIGINS.
  // Capture what the functions log, at the most verbose level.
  api = await startTestApi({
    corsAllowedOrigins: ['https://app.example.com'],
    env: { LOG_LEVEL: 'DEBUG' },
    log: (line) => captured.push(line),
  });
});
afterAll(() => api?.close());

async function record(res: Response): Promise<Response> {
  bodies.push(await res.clone().text());
  return res;
}

describe('secrets', () => {
  it('never writes a key, an Authorization header or a stack trace to logs or responses', async () => {
    const revoked = 'revoked_key_0123456789abcdefghij';
    await createKeyAdminStore(api.storage).upsert({
      hash: hashKey(revoked),
      keyId: 'key_revoked',
      owner: 't',
      plan: 'free',
      status: 'revoked',
      createdAt: new Date().toISOString(),
    });
    const unknown = 'unknown_key_0123456789abcdefghij';
    const keys = [...Object.values(api.keys), revoked, unknown];

    for (const key of keys) {
      await record(await api.call('/pets', { key }));
      await record(await api.call('/pets', { key, method: 'POST', body: `{"name": "${key}", "categoryId": "x"}` }));
      await record(await api.call('/pets', { key, method: 'POST', body: '{broken' }));
      await record(await api.call('/pets/abc', { key }));
      await record(await api.call('/pets/123456789', { key }));
    }
    // An unexpected failure inside a handler: logged as an error, answered 500, with no stack or request data.
    const remove = onEveryClient(
      api,
      'explode',
      (next) => async (args) => {
        if (readsKeys(args.input)) return next(args);
        throw new TypeError(`boom at handler (/var/task/index.mjs:1:2)`);
      },
      'finalizeRequest',
    );
    try {
      const res = await record(await api.call('/pets/1', { key: api.keys.business, contract: false }));
      expect(res.status).toBe(500);
    } finally {
      remove();
    }

    const everything = [...captured, ...bodies];
    expect(captured.some((l) => l.includes('unhandled error') || l.includes('storage unavailable'))).toBe(true);
    for (const text of everything) {
      for (const key of keys) if (text.includes(key)) expect.fail(`key leaked in: ${text.slice(0, 200)}`);
      expect(text).not.toMatch(/"authorization"\s*:|Bearer [A-Za-z0-9_-]{10}/i); // a dumped header or a key
      expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/); // a stack trace
    }
  });
});

describe('hardening headers', () => {
  it('sends Cache-Control: no-store on authenticated responses and nosniff on all', async () => {
    const ok = await api.call('/pets');
    expect(ok.headers.get('cache-control')).toBe('no-store');
    for (const res of [
      ok,
      await api.call('/pets', { key: '' }),
      await api.call('/nope'),
      await api.call('/pets', { method: 'PATCH' }),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('denies CORS by default and echoes only an allowed origin', async () => {
    const other = await api.call('/pets', { headers: { Origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await api.call('/pets', { headers: { Origin: 'https://app.example.com' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('vary')).toBe('Origin');
    const preflight = await api.call('/pets', {
      method: 'OPTIONS',
      key: '',
      contract: false,
      headers: { Origin: 'https://app.example.com' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    // The deployed preflight (a MOCK method, CDK's single-origin form) names the allowed origin whoever asks: a
    // browser on another origin sees a mismatch and refuses. It never echoes the foreign origin.
    const foreign = await api.call('/pets', {
      method: 'OPTIONS',
      key: '',
      contract: false,
      headers: { Origin: 'https://evil.example' },
    });
    expect(foreign.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
  });
});
