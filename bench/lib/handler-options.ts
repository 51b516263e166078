/**
 * The handlers phase's options for a before/after of one cell on a shared machine (bench/phases/handlers.ts):
 *   --handlers-op=createPet,listOrders   only those operations' cells
 *   --handlers-keys=enterprise           only that key kind's cells (business, enterprise)
 *   --handlers-rounds=N                  N measured rounds instead of the mode's
 *   --handlers-seconds=S                 S seconds per side per round instead of the mode's
 *   --handlers-lasting                   one process per side, request and key kind through all the rounds (its
 *                                        collector's luck then weighs on every round alike)
 *   --handlers-trace-gc                  V8's line per collection of every driver (--trace-gc-nvp: pause, survivors,
 *                                        promoted bytes, the helper threads' share) in bench/results/handler-gc/
 *   --cpu-prof                           a V8 profile per driver (its whole life, warm-up included) in
 *                                        bench/results/handler-profiles/<fn>/<side>: where a call's time goes
 */
const value = (argv: readonly string[], name: string) =>
  argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

export function handlerOptions(argv: readonly string[]) {
  const rounds = Number(value(argv, 'handlers-rounds'));
  const seconds = Number(value(argv, 'handlers-seconds'));
  return {
    ops: value(argv, 'handlers-op')?.split(','),
    keys: value(argv, 'handlers-keys')?.split(','),
    rounds: Number.isInteger(rounds) && rounds > 0 ? rounds : undefined,
    seconds: seconds > 0 ? seconds : undefined,
    lasting: argv.includes('--handlers-lasting'),
    profile: argv.includes('--cpu-prof'),
    traceGc: argv.includes('--handlers-trace-gc'),
  };
}
