/** `npm run preflight` as a build machine without AWS credentials runs it, for the tests that run the real command. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The environment without AWS credentials: none in it, no profile file (under `dir`), no instance role. */
export const noCredentials = (dir: string): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_'))),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  AWS_CONFIG_FILE: join(dir, 'none'),
});

/** Runs `npm run preflight -- <args>` without credentials: its exit code and output. */
export const preflightCli = (dir: string, args: string[]) =>
  promisify(execFile)('npm', ['run', '-s', 'preflight', '--', ...args], {
    cwd: ROOT,
    env: noCredentials(dir),
    maxBuffer: 8 << 20,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
