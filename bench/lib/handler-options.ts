/**
 * The handlers phase's options for a before/after of one cell on a shared machine (bench/phases/handlers.ts):
 *   --handlers-op=createPet,listOrders   only those operations' cells
 *   --handlers-keys=enterprise           only that key kind's cells (business, enterprise)
 *   --handlers-rounds=N                  N measured rounds instead of the mode's
 *   --cpu-prof                           a V8 profile per driver (its whole life, warm-up included) in
 *                                        bench/results/handler-profiles/<fn>/<side>: where a call's time goes
 */
const value = (argv: readonly string[], name: string) =>
  argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

export function handlerOptions(argv: readonly string[]) {
  const rounds = Number(value(argv, 'handlers-rounds'));
  return {
    ops: value(argv, 'handlers-op')?.split(','),
    keys: value(argv, 'handlers-keys')?.split(','),
    rounds: Number.isInteger(rounds) && rounds > 0 ? rounds : undefined,
    profile: argv.includes('--cpu-prof'),
  };
}
