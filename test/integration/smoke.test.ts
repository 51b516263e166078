/**
 * `npm run smoke`, the post-deploy check, run as a pipeline would run it (the real npm script, its exit code and
 * output) against the local API, and against a base URL where no API listens.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { main } from '../../scripts/smoke.ts';
import { CHECKS } from '../../lib/smoke/checks.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

function smoke(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'smoke', '--', ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The same CLI in this process (cheaper than a child for the cases beyond the two a pipeline relies on). */
async function smokeHere(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    args,
    (s) => out.push(s),
    (s) => err.push(s),
  );
  return { code, stdout: `${out.join('\n')}\n`, stderr: err.join('\n') };
}

/** A port nothing listens on: bound, noted, released. */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

describe('npm run smoke', () => {
  it('passes against the local API, one PASS line per check, exit 0', async () => {
    // The key from the environment, as a pipeline passes a secret.
    const r = await smoke(['--base', api.url], { ANIMAL_STORE_API_KEY: api.keys.free });
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('PASS'))).toHaveLength(CHECKS.filter((c) => !c.writes).length);
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
    expect(r.stdout).toContain(`\n${CHECKS.filter((c) => !c.writes).length} passed, 0 failed\n`);
    expect(r.stdout).not.toContain('createPet'); // read-only without --write
    // Every operation of the route table is asked, without a key (the gateway answers).
    expect(r.stdout).toContain(`401 unauthorized on all ${ROUTES.length} operations of the route table`);
    expect(r.code).toBe(0);
  });

  it('with --write creates one pet and reads it back', async () => {
    const r = await smokeHere(['--base', `${api.url}/`, '--key', api.keys.pro, '--write']);
    expect(r.stdout).toMatch(/^PASS {2}createPet and read-back: created pet \d+ \("smoke-test /m);
    // Every check, the write checks of every create in the route table included (lib/smoke/route-checks.ts).
    expect(r.stdout).toContain(`\n${CHECKS.length} passed, 0 failed\n`);
    expect(r.code).toBe(0);
    const id = /created pet (\d+)/.exec(r.stdout)![1];
    const res = await api.call(`/pets/${id}`);
    expect(((await res.json()) as { name: string }).name).toMatch(/^smoke-test /);
  });

  it('fails with exit 1 and says why when nothing answers at the base URL', async () => {
    const r = await smoke([
      '--base',
      `http://127.0.0.1:${await deadPort()}/v1`,
      '--key',
      api.keys.free,
      '--timeout',
      '5',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}401 without a key \(Error object\): fetch failed: ECONNREFUSED$/m);
    expect(r.stdout).toMatch(/^0 passed, \d+ failed$/m);
    expect(r.stdout).toContain('Nothing passed: is http://127.0.0.1:');
  });

  it('fails when the base URL misses the version segment (the gateway answers, but not the API)', async () => {
    const r = await smokeHere(['--base', new URL(api.url).origin, '--key', api.keys.free]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}401 without a key \(Error object\): expected 401 unauthorized, got 404/m);
  });

  it('a wrong key fails the keyed checks but not the gateway ones', async () => {
    const r = await smokeHere(['--base', api.url, '--key', 'not_a_real_key_0123456789']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}listPets with the key, X-RateLimit-\* headers: expected 200, got 401 unauthorized/m,
    );
    expect(r.stdout).toMatch(/^PASS {2}gateway 404/m);
  });

  it('exits 2 with the usage on missing arguments', async () => {
    const r = await smokeHere(['--base', api.url, '--key', '']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--key (or ANIMAL_STORE_API_KEY) is required');
  });
});
