/**
 * Where the per-handler phase's processes run (bench/phases/handlers.ts). Its two drivers, one measured at a time,
 * get the machine's last core to themselves; DynamoDB Local and the bench's own process are moved to the others for
 * the phase. Unpinned, a driver's garbage collector splits each scavenge with helper threads that must find a free
 * core beside DynamoDB Local's JVM and the other processes (in V8's trace, the main thread waits on the helpers'
 * share), and the same bundle's pauses settled at 1-1.3 ms in one process and 2.5-3 ms in another. On one core a collection's
 * helpers share the core with the code they pause, as under Lambda's CPU share (a 512 MB function gets about 0.29 of
 * a vCPU, however many threads it runs): a pause is the collector's whole work. `--no-pin` runs unpinned; a machine
 * with one core or without `taskset` (util-linux) is not pinned, and the phase says so.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export type Pinning = {
  /** The core the drivers run on, as taskset reads a CPU list. */
  readonly drivers: string;
  /** Every other core: DynamoDB Local and the bench process for the phase. */
  readonly others: string;
  /** Every core: where the others go back to after the phase. */
  readonly all: string;
};

const hasTaskset = () => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export function pinningFor(argv: readonly string[], cores = availableParallelism()): Pinning | undefined {
  if (argv.includes('--no-pin') || cores < 2 || !hasTaskset()) return undefined;
  const last = cores - 1;
  return { drivers: String(last), others: last === 1 ? '0' : `0-${last - 1}`, all: `0-${last}` };
}

/** Moves a running process, every thread of it, to `cpus` (threads it starts later inherit it). */
export function pinProcess(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** The fork options that start a Node process on `cpus` (taskset runs Node, which keeps fork's IPC channel). */
export function forkOnCpus(cpus: string | undefined, execArgv: readonly string[]) {
  return cpus
    ? { execPath: 'taskset', execArgv: ['-c', cpus, process.execPath, ...execArgv] }
    : { execArgv: [...execArgv] };
}
