/**
 * `npm run smoke -- --base <url> --key <key> [--write] [--timeout <s>] [--json]`: a post-deploy check of a live
 * stage (lib/smoke/). Read-only unless --write. Exit 0 when every check passed, 1 when one failed, 2 on bad usage.
 * The key may come from ANIMAL_STORE_API_KEY instead of --key (keeps it out of shell history and process lists).
 */
import { parseCommandLine } from '../lib/command-line.ts';
import { formatReport, runSmoke } from '../lib/smoke/run.ts';

const USAGE = `Usage: npm run smoke -- --base <url ending in /v1> --key <api key> [--write] [--timeout <seconds>] [--json]
  --write     also create one pet (named "smoke-test <time>") and read it back; it stays in the store
  --key       or ANIMAL_STORE_API_KEY in the environment`;

export async function main(argv: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const parsed = parseCommandLine(
    argv,
    {
      base: { type: 'string' },
      key: { type: 'string' },
      write: { type: 'boolean' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
    USAGE,
    out,
    err,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const key = values.key ?? process.env.ANIMAL_STORE_API_KEY;
  const timeout = Number(values.timeout ?? 10);
  if (!values.base || !key || !(timeout > 0)) {
    err(
      `error: ${!values.base ? '--base is required' : !key ? '--key (or ANIMAL_STORE_API_KEY) is required' : '--timeout must be a positive number of seconds'}\n${USAGE}`,
    );
    return 2;
  }
  try {
    const report = await runSmoke({ base: values.base, key, write: values.write, timeoutMs: timeout * 1000 });
    out(values.json ? JSON.stringify(report, null, 2) : formatReport(report, { write: values.write }));
    return report.ok ? 0 : 1;
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    return 2;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2), console.log, console.error);
