/**
 * `--handlers-trace-gc`: what V8's line per collection (`--trace-gc-nvp`) says of one driver process's scavenges,
 * the young-generation collections that pause every call in flight: how many, their mean pause, the main thread's
 * and the helper threads' share of the work, and the bytes that survived and were promoted each time. The last
 * scavenges stand for the process's settled state; its first ones are the import and the JIT's warm-up.
 */
import { readFileSync } from 'node:fs';

export type ScavengeSummary = {
  readonly scavenges: number;
  readonly markCompacts: number;
  /** Means over the last `settled` scavenges, in ms and MB. */
  readonly pauseMs: number;
  readonly mainMs: number;
  readonly helpersMs: number;
  readonly survivedMb: number;
  readonly promotedMb: number;
};

const field = (line: string, name: string) =>
  Number(new RegExp(` ${name.replace('.', '\\.')}=([0-9.]+)`).exec(line)?.[1]);

export function summarizeGcTrace(file: string, settled = 40): ScavengeSummary {
  const lines = readFileSync(file, 'utf8').split('\n');
  const scavenges = lines.filter((l) => l.includes(' gc=s '));
  const last = scavenges.slice(-settled);
  const mean = (name: string, scale = 1) =>
    last.length ? last.reduce((a, l) => a + (field(l, name) || 0), 0) / last.length / scale : 0;
  return {
    scavenges: scavenges.length,
    markCompacts: lines.filter((l) => / gc=(mc|mmc|ms) /.test(l)).length,
    pauseMs: mean('pause'),
    mainMs: mean('scavenge.parallel'),
    helpersMs: mean('background.scavenge.parallel'),
    survivedMb: mean('new_space_survived', 2 ** 20),
    promotedMb: mean('promoted', 2 ** 20),
  };
}
