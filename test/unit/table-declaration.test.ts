/**
 * A table is declared once (contract/tables.ts): its variable, config entry, storage key, output, logical id and
 * local name derive from the declaration, so adding one changes no hand-written list. This reads the source (the
 * function code, the CDK side and tools, the contract, the entry points; tests and the generated client aside) for
 * any table's derived names outside the declaration, and for an object literal listing two tables' keys.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TABLES, tableKey } from '../../contract/tables.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { tableNameOutputId } from '../../lib/stacks/outputs.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE_DIRS = ['lambdas', 'lib', 'contract', 'bin', 'scripts'];
const DECLARATION = 'contract/tables.ts';

const files = (dir: string): string[] =>
  readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return files(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });

/** The code without its comments (examples in a comment name a table on purpose). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

const SOURCES = SOURCE_DIRS.flatMap(files)
  .filter((f) => f !== DECLARATION)
  .map((f) => ({ file: relative(ROOT, join(ROOT, f)), text: code(readFileSync(join(ROOT, f), 'utf8')) }));

describe('a table declared once', () => {
  it('names no table by its variable, output or logical id outside its declaration', () => {
    const names = TABLES.flatMap((t) => [t.envVar, tableNameOutputId(t), tableLogicalIdOf(t)]);
    const found = SOURCES.flatMap(({ file, text }) =>
      names.filter((n) => new RegExp(`\\b${n}\\b`).test(text)).map((n) => `${file}: ${n}`),
    );
    expect(SOURCES.length).toBeGreaterThan(50);
    expect(found).toEqual([]);
  });

  it('lists no two tables by their keys in one object literal (a hand-written list of tables)', () => {
    const keys = TABLES.map(tableKey);
    // The document's tags are path segments, which a resource and its table may share a name with.
    const found = SOURCES.filter(({ file }) => file !== 'contract/tags.ts').flatMap(({ file, text }) =>
      [...text.matchAll(/\{[^{}]*\}/g)]
        .map((m) => m[0])
        .filter((obj) => keys.filter((k) => new RegExp(`(^|[{,\\s])${k}\\s*:`).test(obj)).length > 1)
        .map((obj) => `${file}: ${obj.slice(0, 80)}`),
    );
    expect(found).toEqual([]);
  });
});
