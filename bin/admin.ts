/** `npm run admin -- --help`: API keys and plans (see lib/admin/cli.ts). */
import { realDeps, runAdmin } from '../lib/admin/cli.ts';

const code = await runAdmin(
  process.argv.slice(2),
  { out: (l) => console.log(l), err: (l) => console.error(l) },
  realDeps,
);
process.exit(code);
