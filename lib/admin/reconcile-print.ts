/**
 * How a command whose record change landed reports what followed it: the change's own line always; then what waits
 * for the grace period, or, when the reconcile after it failed, what failed and the one command that finishes it
 * (`keys reconcile <id>`), as the `error:` line with exit code 1, so a script notices and a person sees both.
 */
import type { Followed } from './lifecycle.ts';
import { resumeCommand, type Sweep, type SweepProgress } from './reconcile-all.ts';
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

/**
 * The printout of `keys reconcile --all`; a PartialFailure when it stopped early (the command that goes on from where
 * it stopped) or keys failed (the command that redoes them: a key's own reconcile when there is one).
 */
export function sweepPrinted(s: Sweep): Printed {
  const lines = [
    ...s.reconciled.map((r) => `Reconciled ${r.keyId}${done(r.did)}`),
    ...s.waiting.map((r) => `Waiting ${r.keyId}: ${r.waiting.join('; ')}`),
    ...s.failed.map((f) => `Failed ${f.keyId}: ${f.error}`),
    `${s.seen} key(s) looked at, ${s.reconciled.length} changed, ${s.failed.length} failed` +
      (s.stopped ? `; STOPPED: ${s.stopped}` : ''),
  ];
  if (s.next) lines.push(`Resume: \`${resumeCommand(s.next)}\``);
  const out = printed(lines.join('\n'), s);
  const redo = s.failed.length === 1 ? `keys reconcile ${s.failed[0]!.keyId}` : 'keys reconcile --all';
  const failedToo = s.failed.length ? `; then \`${redo}\` for the ${s.failed.length} key(s) that failed above` : '';
  if (s.stopped)
    throw new PartialFailure(
      `the sweep stopped after ${s.seen} key(s): ${s.stopped}: run \`${resumeCommand(s.next)}\` to go on from ` +
        `where it stopped${failedToo}`,
      out,
    );
  if (s.failed.length)
    throw new PartialFailure(
      `${s.failed.length} key(s) not reconciled: run \`${redo}\`` +
        (s.failed.length > 1 ? ' again (only what is pending is redone)' : ''),
      out,
    );
  return out;
}

/** A sweep's progress line (stderr): how far it got, and the command that resumes after it. */
export const sweepProgressLine = (p: SweepProgress) =>
  `swept ${p.seen} key(s): ${p.changed} changed, ${p.failed} failed` +
  (p.next ? `; if it stops now, \`${resumeCommand(p.next)}\` resumes here` : '; done');
