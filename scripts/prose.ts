/**
 * `npm run prose`: how long the sentences of README.md and docs/ are, page by page. Code blocks, tables, headings
 * and marker comments are left out: only prose counts. test/contract/prose.test.ts holds every page to the bounds
 * below, so a page that drifts back to long sentences fails the fast check.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The bounds each page is held to. */
export const PROSE_BOUNDS = { medianWords: 20, overFortyShare: 0.1 } as const;
export const README_MAX_LINES = 300;
export const DOCS_MAX_LINES = 2500;

/** README.md and every page of docs/, by path from the repository root. */
export function pages(): string[] {
  const docs = readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** The prose of a Markdown page: its paragraphs and list items, each as one line of text. */
export function paragraphs(markdown: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let fenced = false;
  const flush = () => {
    if (current.length) out.push(current.join(' '));
    current = [];
  };
  for (const raw of markdown.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('```')) {
      fenced = !fenced;
      flush();
      continue;
    }
    if (fenced) continue;
    // Blank lines, headings, tables and whole-line marker comments end a paragraph and are not prose.
    if (line === '' || line.startsWith('#') || line.startsWith('|') || /^<!--.*-->$/.test(line)) {
      flush();
      continue;
    }
    // A list item starts a paragraph of its own.
    if (/^([-*+]|\d+\.)\s/.test(line)) {
      flush();
      current.push(line.replace(/^([-*+]|\d+\.)\s+/, ''));
      continue;
    }
    current.push(line);
  }
  flush();
  return out;
}

/** A paragraph's sentences: split after `.`, `!` or `?` followed by a space. */
export function sentences(paragraph: string): string[] {
  const text = paragraph
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts as its text
    .replace(/\s+/g, ' ')
    .trim();
  return text
    .split(/(?<=[.!?])\s+(?=\S)/)
    .map((s) => s.trim())
    .filter((s) => /[A-Za-z0-9]/.test(s));
}

export const words = (sentence: string): number => sentence.split(/\s+/).filter((w) => /[A-Za-z0-9]/.test(w)).length;

export interface ProseFigures {
  readonly page: string;
  readonly lines: number;
  readonly sentences: number;
  readonly medianWords: number;
  readonly overForty: number;
  readonly overFortyShare: number;
  readonly longest: number;
}

export function proseFigures(page: string, markdown: string): ProseFigures {
  const counts = paragraphs(markdown)
    .flatMap(sentences)
    .map(words)
    .sort((a, b) => a - b);
  const n = counts.length;
  const median = n === 0 ? 0 : n % 2 ? counts[(n - 1) / 2]! : (counts[n / 2 - 1]! + counts[n / 2]!) / 2;
  const overForty = counts.filter((c) => c > 40).length;
  return {
    page,
    lines: markdown.split('\n').length - (markdown.endsWith('\n') ? 1 : 0),
    sentences: n,
    medianWords: median,
    overForty,
    overFortyShare: n === 0 ? 0 : overForty / n,
    longest: counts.at(-1) ?? 0,
  };
}

/** Every page's figures. */
export const allFigures = (): ProseFigures[] =>
  pages().map((p) => proseFigures(p, readFileSync(`${ROOT}${p}`, 'utf8')));

if (import.meta.main) {
  const rows = allFigures();
  console.log('| page | lines | sentences | median words | over 40 words | longest |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.page} | ${r.lines} | ${r.sentences} | ${r.medianWords} | ${(r.overFortyShare * 100).toFixed(1)} % | ${r.longest} |`,
    );
  const docsLines = rows.filter((r) => r.page.startsWith('docs/')).reduce((s, r) => s + r.lines, 0);
  console.log(`\ndocs/ in all: ${docsLines} lines (at most ${DOCS_MAX_LINES})`);
}
