/**
 * How the project's command-line tools (npm run preflight, npm run smoke) read their arguments: node:util's parseArgs
 * with `--help`/`-h` added; help prints the usage and exits 0, a bad option prints `error: <what>` and the usage and
 * exits 2, so the tools answer alike.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP = { help: { type: 'boolean', short: 'h' } } as const;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O & typeof HELP }>>['values'];

/** The parsed option values, or the exit code when the command is already answered (help, or bad usage). */
export function parseCommandLine<const O extends Options>(
  argv: string[],
  options: O,
  usage: string,
  out: (s: string) => void,
  err: (s: string) => void,
): { values: Values<O> } | { exit: number } {
  let values: Values<O>;
  try {
    ({ values } = parseArgs({ args: argv, options: { ...options, ...HELP } }) as { values: Values<O> });
  } catch (e) {
    err(`error: ${(e as Error).message}\n${usage}`);
    return { exit: 2 };
  }
  if ((values as { help?: boolean }).help) return (out(usage), { exit: 0 });
  return { values };
}
