/**
 * The docs: the tables that restate the contract match it. The route-derived ones (operations, statuses, least
 * privilege) are written by `npm run openapi` between marker comments, so a new operation or grant edits no document
 * by hand and a stale one fails here; `npm run docs` publishes the reference page.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ERROR_CODES } from '../../contract/errors.ts';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { ROUTES, writes, type Route } from '../../contract/routes.ts';
import { operationsTable, rewriteGenerated } from '../../lib/api/docs-tables.ts';
import { errorCodesSummary } from '../../lib/api/error-tables.ts';
import { alarmMetricTotal } from '../../lib/api/alarm-metrics.ts';
import { generateDocs } from '../../scripts/openapi.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

it('README.md and docs/api.md list every error code with its status, and no other', () => {
  const readme = [...read('README.md').matchAll(/`([a-z_]+)` \| (\d{3}) \|/g)].map((m) => m[1]);
  expect(new Set(readme)).toEqual(new Set(Object.keys(ERROR_CODES)));
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

describe('the route-derived tables (README.md and docs/)', () => {
  it.each(generateDocs())('$file is current: its generated tables equal what `npm run openapi` writes', (doc) => {
    expect(doc.current, `${doc.file} is stale: run \`npm run openapi\` and commit it`).toBe(doc.fresh);
  });

  it('follow a new route entry with no edit by hand: `npm run openapi` writes its rows', () => {
    // A neutral fixture, not a copy of a real operation: its rows change only when the tables' rules do.
    const fixture = {
      operationId: 'testFixture',
      method: 'PATCH',
      does: 'changes',
      path: '/test-only/things/{thingId}',
      summary: 'Change a thing',
      description: 'A test-only operation.',
      request: {
        params: z.object({ thingId: z.string() }),
        headers: z.object({ 'X-Test-Header': z.string() }),
      },
      success: { status: 204, description: 'Changed.' },
      errors: [],
      access: { tables: [LIMITER_GRANT] },
    } as const satisfies Route;
    const routes = [...ROUTES, fixture];
    const rows = (file: string) =>
      rewriteGenerated(file, read(file), routes)
        .split('\n')
        .filter((l) => l.includes('testFixture'));
    expect(rows('README.md')).toEqual([
      '| `PATCH /test-only/things/{thingId}` | `testFixture` | header `X-Test-Header` | 204 no body | A test-only operation. |',
    ]);
    expect(rows('docs/api.md')).toEqual([
      // It changes data, so a read-only key is refused it: the error table names it with every route that writes.
      `| \`key_read_only\` | 403 | A read-only API key called an operation that changes data. (${[...ROUTES.filter(writes), fixture].map((r) => `\`${r.operationId}\``).join(', ')}) | no: use a key that may write |`,
      '| `testFixture` | `PATCH /test-only/things/{thingId}` | 204, 400, 401, 403, 413, 429, 431, 500, 503 |',
    ]);
    expect(rows('docs/architecture.md')).toEqual(['| testFixture | `UpdateItem` on State (rate limiter) |']);
    // A function of its own brings alarms of its own, and the stage's total row follows.
    expect(alarmMetricTotal(routes)).toBeGreaterThan(alarmMetricTotal());
    expect(rewriteGenerated('docs/runbook.md', read('docs/runbook.md'), routes)).toContain(
      `| **All, per stage** | **${alarmMetricTotal(routes)}** |`,
    );
  });

  it('are rendered between markers only: text around them is kept, a stray or missing marker is refused', () => {
    const codes = `\n<!-- generated: error-codes -->\nold\n<!-- /generated -->\n`;
    const text = `before\n<!-- generated: operations -->\nold\n<!-- /generated -->\nafter\n${codes}`;
    const out = rewriteGenerated('README.md', text);
    expect(out.startsWith('before\n<!-- generated: operations -->\n| Route | Operation |')).toBe(true);
    expect(out).toContain(`${operationsTable()}\n<!-- /generated -->\nafter\n`);
    expect(out.endsWith(`${errorCodesSummary()}\n<!-- /generated -->\n`)).toBe(true);
    expect(() => rewriteGenerated('README.md', 'no markers')).toThrow(/"operations", "error-codes" are missing/);
    expect(() => rewriteGenerated('README.md', `${text}<!-- generated: statuses -->\nx\n<!-- /generated -->`)).toThrow(
      /no generated table named "statuses" belongs here/,
    );
  });

  it("name every route, in the route table's order, and every function's grants", () => {
    const readme = read('README.md');
    const at = ROUTES.map((r) => readme.indexOf(`| \`${r.method} ${r.path}\` | \`${r.operationId}\` |`));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(read('docs/architecture.md')).toContain(
      `| getPet | \`UpdateItem\` on State (rate limiter); \`GetItem\` on Pets |`,
    );
  });
});
