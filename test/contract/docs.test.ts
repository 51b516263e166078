/**
 * The docs: the tables that restate the contract (error codes, operations, statuses, least privilege) match it, so
 * a new operation or grant is named by a failing test; `npm run docs` publishes the reference page.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ERROR_CODES } from '../../contract/errors.ts';
import { buildOpenApi } from '../../lib/api/openapi.ts';
import { leastPrivilegeTable, readmeOperationRows, statusesTable } from '../helpers/docs-tables.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The first table after a heading: its lines, as written. */
function tableAfter(text: string, heading: string): string {
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `heading "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = text.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  return lines.slice(start, end).join('\n');
}

it('docs/api.md lists every error code with its status, and no other', () => {
  const doc = read('docs/api.md');
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

it('docs/api.md lists the statuses of every operation as openapi.json declares them', () => {
  const table = statusesTable(buildOpenApi() as never);
  expect(tableAfter(read('docs/api.md'), '### Statuses per operation'), `paste into docs/api.md:\n${table}\n`).toBe(
    table,
  );
});

it("docs/deployment.md's least-privilege table is the access each route entry declares", () => {
  const table = leastPrivilegeTable();
  expect(
    tableAfter(read('docs/deployment.md'), '## Least privilege (per function)'),
    `paste into docs/deployment.md:\n${table}\n`,
  ).toBe(table);
});

it("the README's operation table has one row per route, in the route table's order", () => {
  const rows = tableAfter(read('README.md'), '## The API')
    .split('\n')
    .slice(2)
    .map((l) => l.split(' | ').slice(0, 2).join(' | ') + ' |');
  expect(
    rows,
    `rows of the README's operation table, first two columns:\n${readmeOperationRows().join('\n')}\n`,
  ).toEqual(readmeOperationRows());
});
