/** docs/api.md's error table mirrors ERROR_CODES. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ERROR_CODES } from '../../contract/errors.ts';

it('docs/api.md lists every error code with its status, and no other', () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
  expect(rows).toEqual(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status]));
});
