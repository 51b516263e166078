/** The docs: docs/api.md's error table mirrors ERROR_CODES; `npm run docs` publishes the reference page. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ERROR_CODES } from '../../contract/errors.ts';

it('docs/api.md lists every error code with its status, and no other', () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
  expect(rows).toEqual(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status]));
});

it('`npm run docs -- --base <url>` publishes a page whose only server is that API, which the page may call', () => {
  const out = mkdtempSync(join(tmpdir(), 'docs-base-'));
  try {
    const run = spawnSync(process.execPath, ['scripts/docs.ts', '--out', out, '--base', 'https://pets.acme.test/v1/'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'openapi.json'), 'utf8')) as { servers: { url: string }[] };
    expect(doc.servers.map((s) => s.url)).toEqual(['https://pets.acme.test/v1']);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain("connect-src 'self' https://pets.acme.test;");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

it('refuses a --base that is not an http(s) URL, saying so', () => {
  const run = spawnSync(
    process.execPath,
    ['scripts/docs.ts', '--out', join(tmpdir(), 'docs-never'), '--base', 'ftp://x/v1'],
    {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      encoding: 'utf8',
    },
  );
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain('--base must be an http(s) URL');
});
