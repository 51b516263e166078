/** `npm run admin -- --help`: API keys and plans (see lib/admin/cli.ts). */
import { createInterface } from 'node:readline/promises';
import { realDeps, runAdmin } from '../lib/admin/cli.ts';

/** The terminal's answer to a confirmation (production revoke and rotate); none when stdin is not a terminal. */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

const code = await runAdmin(
  process.argv.slice(2),
  { out: (l) => console.log(l), err: (l) => console.error(l), ...(process.stdin.isTTY ? { ask } : {}) },
  realDeps,
);
process.exit(code);
