/**
 * `npm run docs [-- --out <dir>] [--base <url>]`: writes the API reference page (lib/docs/site.ts, the same page
 * `npm start` serves at /docs/) as static files to publish, by default into dist/docs/. `--base` is the API the
 * page's "Try it out" calls (a stack's `ApiUrl` output); without it the document's placeholder servers stay.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { docsSite, type SiteOptions } from '../lib/docs/site.ts';

export function writeDocs(outDir: string, opts: SiteOptions = {}): string[] {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const files: string[] = [];
  for (const [name, asset] of docsSite(opts)) {
    writeFileSync(join(outDir, name), asset.body);
    files.push(name);
  }
  return files;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, base: { type: 'string' } } });
  const outDir = resolve(values.out ?? fileURLToPath(new URL('../dist/docs/', import.meta.url)));
  const files = writeDocs(outDir, values.base === undefined ? {} : { base: values.base });
  console.log(`wrote ${files.length} files to ${outDir}: ${files.join(', ')}`);
  console.log(
    `open ${join(outDir, 'index.html')} through any static file server (the page loads openapi.json beside it)`,
  );
}
