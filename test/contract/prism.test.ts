/**
 * A third-party contract tool against the local API: Stoplight Prism (`prism proxy`) in front of it validates each
 * request and each answer against openapi.json and reports what breaks it in an `sl-violations` header. Every
 * answer the API gives here, success or Error, must break nothing the document says; and requests the envelope
 * refuses (a petId that is not canonical, a body in another media type) must break the document too, or the
 * document would say less than the API enforces.
 *
 * Tool limitations, the only exceptions:
 * - Prism matches paths without the servers' base path, so it is pointed at the API's base URL.
 * - It re-serialises a JSON body it parses, so only well-formed bodies are sent through it; fetch cannot send one
 *   header twice. Those cases stay with test/unit/declared-input.test.ts and test/integration/ambiguous-input.test.ts.
 * - It turns an integer parameter's text into a number before validating it, so the pattern the document gives
 *   petId and limit (canonical decimal: `01`, `1e1` are refused) is not checked by it; the bounds are.
 * - It answers an upstream 501 (an operation not implemented yet) with a mock of its own instead of the API's.
 * - On a deprecated operation it adds `Deprecation: true` (an older draft's form) to answers that carry none (the
 *   gateway's 401, say), then reports its own header: that one report is set aside. Our own validator
 *   (test/helpers/contract.ts) checks the API's Deprecation header on every response the integration tests see.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { fixturesSending, requestInit, sampleRequests } from '../helpers/samples.ts';
import { OPENAPI_PATH, ROOT } from '../../scripts/openapi.ts';

let api: TestApi;
let prism: ChildProcess;
let base: string;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

beforeAll(async () => {
  api = await startTestApi();
  const port = await freePort();
  prism = spawn(
    process.execPath,
    [
      `${ROOT}node_modules/@stoplight/prism-cli/dist/index.js`,
      'proxy',
      OPENAPI_PATH,
      api.url,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: ROOT, env: { ...process.env, SCARF_ANALYTICS: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Prism is listening')) resolve();
    };
    prism.stdout!.on('data', seen);
    prism.stderr!.on('data', seen);
    prism.once('exit', (code) => reject(new Error(`prism exited (${code}): ${log.slice(-2000)}`)));
  });
  base = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(async () => {
  prism?.kill();
  await api?.close();
});

interface Violation {
  readonly location: readonly string[];
  readonly severity: string;
  readonly message: string;
  readonly code?: string;
}

/** Sends a request through Prism: the API's answer and what Prism found it (and the request) break. */
async function through(path: string, init: RequestInit): Promise<{ status: number; violations: Violation[] }> {
  const res = await fetch(`${base}${path}`, init);
  await res.arrayBuffer();
  const header = res.headers.get('sl-violations');
  return { status: res.status, violations: header ? (JSON.parse(header) as Violation[]) : [] };
}

/** Prism's own `Deprecation: true` on a deprecated operation's answers (see above): not the API's. */
const prismOwn = (x: Violation) => x.location.join('.') === 'response.header.deprecation';

const about = (v: readonly Violation[], where: 'request' | 'response') =>
  v
    .filter((x) => x.location[0] === where && x.severity === 'Error' && !prismOwn(x))
    .map((x) => `${x.location.join('.')}: ${x.message}`);

const fixtures = fixturesSending(async (r) => (await api.call(r.path, requestInit(r))).json());

describe('Prism (a validating proxy) finds nothing the API answers outside the document', () => {
  it("each operation's sample, with a key and without one, and with a query parameter it does not declare", async () => {
    const key = api.keys.business;
    for (const r of await sampleRequests(fixtures)) {
      const ok = await through(r.path, requestInit(r, { key }));
      // Prism answers an upstream 501 with a mock of its own (see above): the API's 501 is not what it checks.
      if (r.status !== 501) expect(ok.status, r.operationId).toBe(r.status);
      expect(about(ok.violations, 'request'), r.operationId).toEqual([]);
      expect(about(ok.violations, 'response'), r.operationId).toEqual([]);

      const anonymous = await through(r.path, requestInit(r));
      expect(anonymous.status, r.operationId).toBe(401);
      expect(about(anonymous.violations, 'response'), `${r.operationId} 401`).toEqual([]);

      const typo = `${r.path}${r.path.includes('?') ? '&' : '?'}Typo=1`;
      const refused = await through(typo, requestInit(r, { key }));
      expect(refused.status, `${r.operationId} ?Typo`).toBe(400);
      expect(about(refused.violations, 'response'), `${r.operationId} 400`).toEqual([]);
    }
    expect(ROUTES.length).toBeGreaterThan(0);
  });

  it('errors the envelope answers: 404, 413, 415, invalid headers; and the document forbids what it refuses', async () => {
    const key = api.keys.business;
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const cases: [string, string, RequestInit, number, boolean][] = [
      // [what, path, init, status, whether the document itself forbids the request]
      ['an id no pet has', '/pets/9007199254740990', { headers: auth }, 404, false],
      // Refused by the API and forbidden by the document's pattern, which Prism does not apply (see above).
      ['a petId with a leading zero', '/pets/01', { headers: auth }, 400, false],
      ['a limit in exponent form', '/pets?limit=1e1', { headers: auth }, 400, false],
      ['a limit out of range', '/pets?limit=101', { headers: auth }, 400, true],
      [
        'a body over the cap',
        '/pets',
        { method: 'POST', headers: auth, body: JSON.stringify({ name: 'x'.repeat(9000), categoryId: 1 }) },
        413,
        true,
      ],
      [
        'a body in another media type',
        '/pets',
        { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'Rex' },
        415,
        true,
      ],
      [
        'an Idempotency-Key that is not printable ASCII',
        '/pets',
        {
          method: 'POST',
          headers: { ...auth, 'Idempotency-Key': 'a\u00e9' },
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        },
        400,
        true,
      ],
      [
        'a blank name',
        '/pets',
        { method: 'POST', headers: auth, body: JSON.stringify({ name: '\u200b', categoryId: 1 }) },
        400,
        true,
      ],
    ];
    for (const [what, path, init, status, forbidden] of cases) {
      const r = await through(path, init);
      expect(r.status, what).toBe(status);
      expect(about(r.violations, 'response'), what).toEqual([]);
      expect(about(r.violations, 'request').length > 0, `${what}: the document forbids it`).toBe(forbidden);
    }
  });

  it("the limiter's 429 with Retry-After, and a deprecated operation's 410 after its sunset", async () => {
    const statuses = new Set<number>();
    // The Free plan's per-minute limit, and then some: the limiter (or the gateway's usage plan) answers 429. The
    // service's clock stands still meanwhile (on a loaded machine the requests through Prism may span a new minute),
    // in the middle of the minute: in its last second the limiter counts a full minute's requests in the next one
    // (containers' clocks may disagree that much), which a clock standing there would keep admitting (1 run in 60).
    const at = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
    api.clock.set(() => at);
    try {
      for (let i = 0; i < 70 && !statuses.has(429); i++) {
        const r = await through('/pets?limit=1', { headers: { Authorization: `Bearer ${api.keys.free}` } });
        statuses.add(r.status);
        expect(about(r.violations, 'response'), `${r.status}`).toEqual([]);
      }
    } finally {
      api.clock.reset();
    }
    expect(statuses).toContain(429);
    const deprecated = ROUTES.find((r) => r.deprecation)!;
    api.clock.set(() => Date.parse(deprecated.deprecation!.sunsetAt) + 60_000);
    try {
      const gone = await through(deprecated.path.replace(/\{\w+\}/g, '1'), {
        method: deprecated.method,
        headers: { Authorization: `Bearer ${api.keys.business}` },
      });
      expect(gone.status).toBe(410);
      expect(about(gone.violations, 'response')).toEqual([]);
    } finally {
      api.clock.reset();
    }
  });
});
