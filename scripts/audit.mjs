// `npm audit --omit=dev` for CI: the dependencies the deployed functions bundle, audited where the registry offers
// the audit endpoint, and said plainly where it does not (a mirror answering 405 to the bulk advisory POST must not
// fail CI, nor pass as "no vulnerabilities"). Plain ESM, no dependencies.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What CI does with `npm audit --json`'s output and exit code. */
export function auditVerdict(stdout, exitCode) {
  let report;
  try {
    report = JSON.parse(stdout);
  } catch {
    return { exit: 1, message: `npm audit: unreadable output (exit ${exitCode})` };
  }
  // The registry has no audit endpoint (405 here; 404 or 501 on other mirrors): nothing was audited.
  if (report.statusCode && !report.metadata) {
    const where = report.uri ?? 'the registry';
    return {
      exit: 0,
      message: `npm audit: NOT RUN: ${where} answered ${report.statusCode} (no audit endpoint on this registry); dependencies are not audited here`,
    };
  }
  const counts = report.metadata?.vulnerabilities;
  if (!counts) return { exit: 1, message: `npm audit: unexpected report (exit ${exitCode})` };
  const found = Object.entries(counts).filter(([k, n]) => k !== 'total' && n > 0);
  if (!found.length) return { exit: 0, message: 'npm audit --omit=dev: no known vulnerabilities' };
  return {
    exit: 1,
    message: `npm audit --omit=dev: ${found.map(([k, n]) => `${n} ${k}`).join(', ')} (run \`npm audit --omit=dev\` for details)`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const run = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8' });
  const v = auditVerdict(run.stdout, run.status);
  (v.exit ? console.error : console.log)(v.message);
  process.exit(v.exit);
}
