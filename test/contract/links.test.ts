/**
 * Every link between the README and docs/ reaches a file that exists and, with a `#fragment`, a heading on that
 * page (GitHub's slugs), so moving a section cannot leave a reader at a dead link.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, pages } from '../../scripts/prose.ts';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.trim().startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** The page's Markdown links outside code, as [target, fragment]. */
function links(markdown: string): [string, string | undefined][] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/i.test(t))
    .map((t) => {
      const [file, fragment] = t.split('#');
      return [file!, fragment];
    });
}

it.each(pages())('%s: every link to a page of this repository and its section resolves', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const broken: string[] = [];
  for (const [file, fragment] of links(text)) {
    const target = file === '' ? page : normalize(join(dirname(page), file));
    if (!existsSync(join(ROOT, target))) {
      broken.push(`${file} (no such file)`);
      continue;
    }
    if (fragment && target.endsWith('.md') && !anchors(readFileSync(join(ROOT, target), 'utf8')).has(fragment))
      broken.push(`${file}#${fragment} (no such heading)`);
  }
  expect(broken, page).toEqual([]);
});
