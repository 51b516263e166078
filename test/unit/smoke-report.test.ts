/**
 * The smoke tool's report hints at a base URL without the version segment as soon as a check fails: against
 * `https://…/` some unauthenticated checks still pass (the gateway's 404 and 405), so waiting for all to fail hid it.
 */
import { expect, it } from 'vitest';
import { formatReport, type SmokeReport } from '../../lib/smoke/run.ts';

const report = (base: string, oks: boolean[]): SmokeReport => ({
  base,
  ok: oks.every(Boolean),
  results: oks.map((ok, i) => ({ name: `check ${i}`, ok, detail: ok ? 'fine' : 'HTTP 403' })),
});

it('names a base URL without /v1 when some checks pass and others fail', () => {
  const text = formatReport(report('https://abc.execute-api.eu-west-1.amazonaws.com', [true, true, false, false]));
  expect(text).toContain('2 passed, 2 failed');
  expect(text).toMatch(/does not end in \/v1: use the stage's ApiUrl output/);
});

it('says nothing more when all pass, and keeps the unreachable hint for a /v1 base where nothing passed', () => {
  expect(formatReport(report('http://localhost:3000/v1', [true, true])).split('\n')).toHaveLength(4);
  expect(formatReport(report('http://localhost:3000/v1', [false, false]))).toMatch(/Nothing passed/);
});
