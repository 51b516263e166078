/**
 * `npm run walk-back -- --stage <stage|account> [-c key=value]…`: walks back a failed first deploy so that the first
 * deploy can run again (lib/preflight/walk-back-cli.ts). Exit 0 when the stack is gone, 1 when a step failed (the
 * same command finishes it), 2 on bad usage or a stack it refuses to touch.
 */
import { main } from '../lib/preflight/walk-back-cli.ts';

process.exitCode = await main(
  process.argv.slice(2),
  (s) => console.log(s),
  (s) => console.error(s),
);
