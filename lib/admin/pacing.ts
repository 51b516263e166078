/**
 * API Gateway's control plane at the rates AWS documents ("Amazon API Gateway quotas": quotas for creating,
 * deploying and managing an API, fixed, per account): each call waits for its operation's turn, and a call AWS
 * still throttles (another admin, a deploy of the stack spending the same allowance) is sent again after a backoff.
 * The clock and the sleep are injected, so tests run the 20 s of UpdateUsagePlan on a simulated clock.
 */

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

export interface PacingClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: PacingClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** What the paced client needs of an SDK client. */
export interface Sender {
  send(command: object): Promise<unknown>;
}

const operationOf = (command: object) => command.constructor.name.replace(/Command$/, '');

const isThrottled = (err: unknown) => (err as Error)?.name === 'TooManyRequestsException';

/**
 * A client whose calls keep to the documented rates. A throttled call is retried after the longer of what AWS asks
 * (retryAfterSeconds) and an exponential backoff from the operation's interval; after THROTTLED_ATTEMPTS, its
 * TooManyRequestsException reaches the caller (the step failed, nothing was applied).
 */
export function pacedSender(client: Sender, clock: PacingClock = realClock): Sender {
  const next = new Map<string, number>();
  let nextAny = 0;
  /** Waits for the operation's turn, then takes it (turns are handed out in order of asking). */
  async function turn(op: string): Promise<void> {
    const interval = CONTROL_PLANE_INTERVAL_MS[op] ?? OTHER_OPERATION_INTERVAL_MS;
    const at = Math.max(clock.now(), next.get(op) ?? 0, nextAny);
    next.set(op, at + interval);
    nextAny = at + OTHER_OPERATION_INTERVAL_MS;
    const wait = at - clock.now();
    if (wait > 0) await clock.sleep(wait);
  }
  return {
    async send(command) {
      const op = operationOf(command);
      const interval = CONTROL_PLANE_INTERVAL_MS[op] ?? OTHER_OPERATION_INTERVAL_MS;
      for (let attempt = 1; ; attempt++) {
        await turn(op);
        try {
          return await client.send(command);
        } catch (err) {
          if (!isThrottled(err) || attempt >= THROTTLED_ATTEMPTS) throw err;
          const asked = Number((err as { retryAfterSeconds?: string }).retryAfterSeconds ?? 0) * 1000;
          const backoff = Math.max(asked, interval * 2 ** (attempt - 1));
          next.set(op, Math.max(next.get(op) ?? 0, clock.now() + backoff));
        }
      }
    },
  };
}
