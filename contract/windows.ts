/**
 * The limiter's windows: the UTC minute and the UTC day a moment falls in. The function side counts in them and the
 * admin tool reads and writes the same items, so both take them from here.
 */
export interface Windows {
  readonly nowMs: number;
  readonly nowSec: number;
  /** Start of the current UTC minute, unix seconds. */
  readonly minuteStart: number;
  readonly minuteReset: number;
  /** Start of the current UTC day, unix seconds. */
  readonly dayStart: number;
  readonly dayReset: number;
}

export function windowsAt(nowMs: number): Windows {
  const nowSec = Math.floor(nowMs / 1000);
  const minuteStart = nowSec - (nowSec % 60);
  const dayStart = nowSec - (nowSec % 86_400);
  return { nowMs, nowSec, minuteStart, minuteReset: minuteStart + 60, dayStart, dayReset: dayStart + 86_400 };
}
