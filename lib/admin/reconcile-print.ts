/**
 * How a command whose record change landed reports what followed it: the change's own line always; then what waits
 * for the grace period, or, when the reconcile after it failed, what failed and the one command that finishes it
 * (`keys reconcile <id>`), as the `error:` line with exit code 1, so a script notices and a person sees both.
 */
import type { Followed } from './lifecycle.ts';
import type { Sweep } from './reconcile-all.ts';
import { PartialFailure, printed, type Printed } from './printed.ts';

/** ": did a; did b" after a line, or nothing. */
export const done = (did: readonly string[]) => (did.length ? `: ${did.join('; ')}` : '');

/** The printout of a landed change; throws PartialFailure (the printout kept) when its reconcile failed. */
export function landed<T extends Followed & { keyId: string }>(human: string, data: T): Printed {
  const waiting = data.waiting?.length
    ? `\nWaiting: ${data.waiting.join('; ')}: \`keys reconcile ${data.keyId}\` finishes it then (or \`keys purge\`)`
    : '';
  const out = printed(`${human}${waiting}`, data);
  if (data.pending)
    throw new PartialFailure(
      `the change is made, but applying it is not finished: ${data.pending.error}; run \`${data.pending.next}\``,
      printed(`${out.human}\nPending: ${data.pending.error}`, data),
    );
  return out;
}

/** The printout of `keys reconcile --all`; a PartialFailure naming the resume point when keys failed. */
export function sweepPrinted(s: Sweep): Printed {
  const lines = [
    ...s.reconciled.map((r) => `Reconciled ${r.keyId}${done(r.did)}`),
    ...s.waiting.map((r) => `Waiting ${r.keyId}: ${r.waiting.join('; ')}`),
    ...s.failed.map((f) => `Failed ${f.keyId}: ${f.error}`),
    `${s.seen} key(s) looked at, ${s.reconciled.length} changed, ${s.failed.length} failed`,
  ];
  const out = printed(lines.join('\n'), s);
  if (s.failed.length)
    throw new PartialFailure(
      `${s.failed.length} key(s) not reconciled: run \`keys reconcile --all\` again (only what is pending is redone)`,
      out,
    );
  return out;
}
