/** The service's clock. Tests replace it to cross window boundaries and dates without sleeping. */
let nowFn: () => number = Date.now;

/** Milliseconds since the epoch. */
export function now(): number {
  return nowFn();
}

export function setClock(fn: () => number): void {
  nowFn = fn;
}

export function resetClock(): void {
  nowFn = Date.now;
}
