/**
 * Runs the smoke checks against a live stage and reports one line per check. The CLI (scripts/smoke.ts) is a thin
 * wrapper; tests call `runSmoke` directly.
 */
import { createAnimalStoreClient } from '../../client/index.ts';
import { CHECKS, type Check, type SmokeContext } from './checks.ts';
import { describeError, recordingFetch } from './probe.ts';

export interface SmokeOptions {
  /** The stage's base URL including the version segment, e.g. `https://api.example.com/v1`. */
  readonly base: string;
  readonly key: string;
  /** Also create one pet and read it back. */
  readonly write?: boolean;
  /** Per request (default 10 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly checks?: readonly Check[];
}

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  /** What was seen (on success) or why it failed. */
  readonly detail: string;
}

export interface SmokeReport {
  readonly base: string;
  readonly ok: boolean;
  readonly results: readonly CheckResult[];
}

/** Throws on an unusable base URL (a usage error, not a failed check). */
export function normalizeBase(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`--base must be an absolute URL such as https://api.example.com/v1, got "${base}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`--base must be http(s), got ${url.protocol}`);
  if (url.search || url.hash) throw new Error('--base must not carry a query or fragment');
  return url.href.replace(/\/+$/, '');
}

export async function runSmoke(opts: SmokeOptions): Promise<SmokeReport> {
  const base = normalizeBase(opts.base);
  const recorder = recordingFetch(opts.timeoutMs ?? 10_000, opts.fetch);
  const ctx: SmokeContext = {
    base,
    // One attempt: a smoke check reports what the stage answers, it does not retry a 5xx or a 429 away.
    client: createAnimalStoreClient({
      baseUrl: base,
      apiKey: opts.key,
      fetch: recorder.fetch,
      retry: { maxAttempts: 1 },
    }),
    fetch: recorder.fetch,
    seen: recorder.seen,
    now: opts.now ?? Date.now,
  };
  const results: CheckResult[] = [];
  for (const check of opts.checks ?? CHECKS) {
    if (check.writes && !opts.write) continue;
    try {
      results.push({ name: check.name, ok: true, detail: await check.run(ctx) });
    } catch (err) {
      results.push({ name: check.name, ok: false, detail: describeError(err) });
    }
  }
  return { base, ok: results.every((r) => r.ok), results };
}

/**
 * One line per check, then a summary; a hint when the base URL does not end in the version segment (`/v1`: checks of
 * unauthenticated answers may still pass against the wrong path, so this cannot wait for everything to fail) or when
 * nothing passed (usually a wrong or unreachable base URL).
 */
export function formatReport(report: SmokeReport, opts: { write?: boolean } = {}): string {
  const lines = [`Smoke checks against ${report.base}${opts.write ? ' (with --write)' : ' (read-only)'}`];
  for (const r of report.results) lines.push(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name}: ${r.detail}`);
  const failed = report.results.filter((r) => !r.ok).length;
  lines.push(`${report.results.length - failed} passed, ${failed} failed`);
  if (failed && URL.canParse(report.base) && !/\/v\d+\/?$/.test(new URL(report.base).pathname))
    lines.push(`${report.base} does not end in /v1: use the stage's ApiUrl output as the base URL`);
  else if (failed && failed === report.results.length) {
    lines.push(
      `Nothing passed: is ${report.base} the stage's base URL (the ApiUrl output, ending in /v1) and reachable?`,
    );
  }
  return lines.join('\n');
}
