/**
 * The docs stay readable: every page's prose in short sentences, the README a screen's worth of reading, docs/
 * bounded in all. scripts/prose.ts measures them (`npm run prose` prints the table).
 */
import { expect, it } from 'vitest';
import {
  DOCS_MAX_LINES,
  PROSE_BOUNDS,
  README_MAX_LINES,
  allFigures,
  paragraphs,
  sentences,
  words,
} from '../../scripts/prose.ts';

const figures = allFigures();

it.each(figures.map((f) => [f.page, f] as const))('%s: a median sentence of at most 20 words, few over 40', (_, f) => {
  expect(f.medianWords, `${f.page}: median words per sentence`).toBeLessThanOrEqual(PROSE_BOUNDS.medianWords);
  expect(f.overFortyShare, `${f.page}: share of sentences over 40 words`).toBeLessThanOrEqual(
    PROSE_BOUNDS.overFortyShare,
  );
});

it('the README fits a screen of reading and docs/ stays bounded', () => {
  expect(figures.find((f) => f.page === 'README.md')!.lines).toBeLessThanOrEqual(README_MAX_LINES);
  const docs = figures.filter((f) => f.page.startsWith('docs/')).reduce((n, f) => n + f.lines, 0);
  expect(docs).toBeLessThanOrEqual(DOCS_MAX_LINES);
});

it('measures prose only: code blocks, tables, headings and markers are left out; list items stand alone', () => {
  const page = [
    '# A heading of many words that would count if headings counted at all here',
    '',
    'One short sentence. Another one here!',
    '- a list item',
    '',
    '```sh',
    'npm run something --with many words that are code and not prose at all',
    '```',
    '| a | table | row |',
    '<!-- generated: operations -->',
    'See [the page](docs/api.md) for more.',
  ].join('\n');
  const all = paragraphs(page).flatMap(sentences);
  expect(all).toEqual(['One short sentence.', 'Another one here!', 'a list item', 'See the page for more.']);
  expect(all.map(words)).toEqual([3, 3, 3, 5]);
});
