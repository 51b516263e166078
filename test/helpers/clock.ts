/**
 * A clock for a test API (startTestApi({ now: clock.now })): the wall clock until a test sets another, so a test
 * crosses windows, cursor expiry and sunset dates without sleeping.
 */
export interface TestClock {
  readonly now: () => number;
  /** From now on the service's time is `fn()`. */
  set(fn: () => number): void;
  /** Back to the wall clock. */
  reset(): void;
}

export function testClock(): TestClock {
  let current: () => number = Date.now;
  return {
    now: () => current(),
    set: (fn) => {
      current = fn;
    },
    reset: () => {
      current = Date.now;
    },
  };
}
