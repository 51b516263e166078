/**
 * `npm run preflight -- --stage <stage> [--previous <template.json>] [-c key=value]…`: the checks a pipeline runs
 * before `cdk deploy` (lib/preflight/run.ts). Exit 0 when nothing was found, 1 with one line per finding, 2 on bad
 * usage.
 */
import { main } from '../lib/preflight/run.ts';

process.exitCode = await main(
  process.argv.slice(2),
  (s) => console.log(s),
  (s) => console.error(s),
);
