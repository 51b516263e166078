/**
 * API Gateway's control plane at the rates AWS documents ("Amazon API Gateway quotas": quotas for creating,
 * deploying and managing an API, fixed, per account): each call waits for its operation's turn, and a call AWS
 * still throttles (another admin, a deploy of the stack spending the same allowance) is sent again after a backoff.
 * The clock and the sleep are injected, so tests run the 20 s of UpdateUsagePlan on a simulated clock. Every wait is
 * bounded (BACKOFF_CAP_MS), said when it is long, and counted against the command's --max-wait.
 */
import { AdminError } from './ports.ts';

/** How often an operation may be called per account: at most one call every `intervalMs`. */
export const CONTROL_PLANE_INTERVAL_MS: Readonly<Record<string, number>> = {
  // 1 request every 20 seconds per account.
  UpdateUsagePlan: 20_000,
  // 5 requests per second per account.
  CreateApiKey: 200,
  DeleteApiKey: 200,
};

/** Every other operation: within AWS's total for the control plane, 10 requests per second per account. */
export const OTHER_OPERATION_INTERVAL_MS = 100;

/** Attempts of one call AWS keeps throttling before the command stops and says so. */
export const THROTTLED_ATTEMPTS = 8;

/**
 * The longest backoff after a throttle, whatever the exponent or AWS's retryAfterSeconds say: one call then waits
 * at most (THROTTLED_ATTEMPTS - 1) x this (7 minutes) before it fails, never the 42 minutes an uncapped doubling
 * from UpdateUsagePlan's 20 s reached.
 */
export const BACKOFF_CAP_MS = 60_000;

/** A wait at least this long is said (on stderr) before it starts: a command is never silent for longer. */
export const SAY_WAITS_FROM_MS = 5_000;

export interface PacingClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: PacingClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** A wait for the control plane, as it is said before it starts. */
export interface Waiting {
  readonly operation: string;
  readonly waitMs: number;
  /** `paced`: the operation's documented rate; `throttled`: AWS refused the call and it is sent again after this. */
  readonly reason: 'paced' | 'throttled';
  /** The attempt that follows the wait (throttled only). */
  readonly attempt?: number;
  /** What the command has waited for the control plane so far, this wait not included. */
  readonly waitedMs: number;
}

export interface PacingOptions {
  /** Hears every wait of at least SAY_WAITS_FROM_MS before it starts (the CLI prints a line on stderr). */
  readonly progress?: (w: Waiting) => void;
  /**
   * The most the command waits for the control plane in all (`--max-wait`): a wait that would pass it is not
   * started, the call is not sent, and every later call is refused too (ControlPlaneWaitExceeded): the command
   * stops where it is and reports what is left. @default - no limit
   */
  readonly maxWaitMs?: number;
  /** The least time between any two calls, whatever their operations. @default OTHER_OPERATION_INTERVAL_MS */
  readonly everyMs?: number;
}

/** One line for people about a wait. */
export function describeWait(w: Waiting): string {
  const s = (ms: number) => `${Math.ceil(ms / 1000)} s`;
  const why =
    w.reason === 'paced'
      ? `${w.operation} keeps to AWS's rate for it`
      : `AWS throttled ${w.operation}; attempt ${w.attempt} of ${THROTTLED_ATTEMPTS} follows`;
  return `waiting ${s(w.waitMs)} for API Gateway's control plane (${why}; ${s(w.waitedMs)} waited so far)`;
}

/** The command stopped at its --max-wait: nothing more was sent to API Gateway. */
export class ControlPlaneWaitExceeded extends AdminError {
  readonly operation: string;
  readonly maxWaitMs: number;
  constructor(operation: string, maxWaitMs: number) {
    super(
      `stopped at --max-wait ${Math.round(maxWaitMs / 1000)} s of waiting for API Gateway's control plane: ` +
        `${operation} and what follows it were not sent`,
    );
    this.operation = operation;
    this.maxWaitMs = maxWaitMs;
  }
}

/** What the paced client needs of an SDK client. */
export interface Sender {
  send(command: object): Promise<unknown>;
}

const operationOf = (command: object) => command.constructor.name.replace(/Command$/, '');

const isThrottled = (err: unknown) => (err as Error)?.name === 'TooManyRequestsException';

/**
 * A client whose calls keep to the documented rates. A throttled call is retried after the longer of what AWS asks
 * (retryAfterSeconds) and an exponential backoff from the operation's interval, at most BACKOFF_CAP_MS; after
 * THROTTLED_ATTEMPTS, its TooManyRequestsException reaches the caller (the step failed, nothing was applied).
 */
export function pacedSender(client: Sender, clock: PacingClock = realClock, options: PacingOptions = {}): Sender {
  const next = new Map<string, number>();
  let nextAny = 0;
  let waited = 0;
  let stopped: ControlPlaneWaitExceeded | undefined;
  /** Sleeps, said first when long, unless it would pass --max-wait. */
  async function wait(ms: number, w: Omit<Waiting, 'waitMs' | 'waitedMs'>): Promise<void> {
    if (options.maxWaitMs !== undefined && waited + ms > options.maxWaitMs)
      throw (stopped = new ControlPlaneWaitExceeded(w.operation, options.maxWaitMs));
    if (ms >= SAY_WAITS_FROM_MS) options.progress?.({ ...w, waitMs: ms, waitedMs: waited });
    waited += ms;
    await clock.sleep(ms);
  }
  /** Waits for the operation's turn, then takes it (turns are handed out in order of asking). */
  async function turn(op: string, attempt: number): Promise<void> {
    const interval = CONTROL_PLANE_INTERVAL_MS[op] ?? OTHER_OPERATION_INTERVAL_MS;
    const at = Math.max(clock.now(), next.get(op) ?? 0, nextAny);
    next.set(op, at + interval);
    nextAny = at + Math.max(options.everyMs ?? 0, OTHER_OPERATION_INTERVAL_MS);
    const ms = at - clock.now();
    if (ms > 0)
      await wait(
        ms,
        attempt > 1 ? { operation: op, reason: 'throttled', attempt } : { operation: op, reason: 'paced' },
      );
  }
  return {
    async send(command) {
      const op = operationOf(command);
      if (stopped) throw new ControlPlaneWaitExceeded(op, stopped.maxWaitMs);
      const interval = CONTROL_PLANE_INTERVAL_MS[op] ?? OTHER_OPERATION_INTERVAL_MS;
      for (let attempt = 1; ; attempt++) {
        await turn(op, attempt);
        try {
          return await client.send(command);
        } catch (err) {
          if (!isThrottled(err) || attempt >= THROTTLED_ATTEMPTS) throw err;
          const asked = Number((err as { retryAfterSeconds?: string }).retryAfterSeconds ?? 0) * 1000;
          const backoff = Math.min(BACKOFF_CAP_MS, Math.max(asked, interval * 2 ** (attempt - 1)));
          next.set(op, Math.max(next.get(op) ?? 0, clock.now() + backoff));
        }
      }
    },
  };
}
