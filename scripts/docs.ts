/**
 * `npm run docs [-- --out <dir>]`: writes the API reference page (lib/docs/site.ts, the same page `npm start`
 * serves at /docs/) as static files to publish, by default into dist/docs/.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { docsSite } from '../lib/docs/site.ts';

export function writeDocs(outDir: string): string[] {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const files: string[] = [];
  for (const [name, asset] of docsSite()) {
    writeFileSync(join(outDir, name), asset.body);
    files.push(name);
  }
  return files;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const outDir = resolve(values.out ?? fileURLToPath(new URL('../dist/docs/', import.meta.url)));
  const files = writeDocs(outDir);
  console.log(`wrote ${files.length} files to ${outDir}: ${files.join(', ')}`);
  console.log(
    `open ${join(outDir, 'index.html')} through any static file server (the page loads openapi.json beside it)`,
  );
}
