/**
 * `cdk diff` against the deployed stack, read for replacements: the CLI prints one line per changed resource,
 * `[~] <type> <path> <logical id> replace` (or `may be replaced`, and `destroy`/`orphan` for a removal), from the
 * change set CloudFormation computes (its own Replacement verdict) or the template diff.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPLACEMENT_PROPERTIES } from './update-rules.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const IMPACT = /^\[([~+-])\] (AWS::[A-Za-z0-9]+::[A-Za-z0-9]+) (.*?) ?(replace|may be replaced|destroy|orphan)\s*$/;

/** One line per stateful or fixed-name resource `cdk diff` says is replaced (or may be) or removed. */
export function replacementsInDiff(output: string): string[] {
  const findings: string[] = [];
  // eslint-disable-next-line no-control-regex
  for (const raw of output.replace(/\u001b\[[0-9;]*m/g, '').split('\n')) {
    const m = IMPACT.exec(raw.trim());
    if (!m || !(m[2]! in REPLACEMENT_PROPERTIES)) continue;
    const logicalId = m[3]!.split(' ').pop();
    findings.push(`cdk diff: ${logicalId} (${m[2]}) ${m[4] === 'may be replaced' ? 'may be replaced' : m[4]}`);
  }
  return findings;
}

/** Runs `cdk diff <stack>` with the same context; its output, or why it could not run. */
export function runCdkDiff(stackName: string, context: Readonly<Record<string, string>>): string {
  const args = [
    'cdk',
    'diff',
    stackName,
    '--no-color',
    ...Object.entries(context).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ];
  const run = spawnSync('npx', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  if (run.status !== 0 && run.status !== 1)
    throw new Error(`cdk diff exited ${run.status}: ${run.stderr.trim().split('\n').pop()}`);
  return `${run.stdout}${run.stderr}`;
}
