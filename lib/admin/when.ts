/**
 * Moments and lengths of time as the admin tool takes them: `2027-01-31` (that UTC day's start),
 * `2027-01-31T12:00:00Z` (an ISO time with its zone), or a length from now: `90m`, `12h`, `30d`.
 */
import { AdminError } from './ports.ts';

const UNIT_SECONDS = { m: 60, h: 3_600, d: 86_400 } as const;

/** A length of time (`90m`, `12h`, `30d`) in seconds; undefined when `v` is not one. */
export function durationSeconds(v: string): number | undefined {
  const m = /^(\d{1,6})([mhd])$/.exec(v.trim());
  return m ? Number(m[1]) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS] : undefined;
}

/** Whether `YYYY-MM-DD` is a day of the calendar (Date.parse takes 2025-02-30 as 2 March). */
export const realDay = (day: string): boolean => {
  const t = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === day;
};

/** A moment given as a date or an ISO time with its zone, in unix seconds; undefined when `v` is neither. */
export function momentSeconds(v: string): number | undefined {
  const s = v.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(s);
  if (!date && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(s)) return undefined;
  if (!realDay(s.slice(0, 10))) return undefined;
  const ms = Date.parse(date ? `${s}T00:00:00Z` : s);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/** The longest expiry ahead: ten years (a key meant to last longer is given no expiry). */
export const MAX_EXPIRY_DAYS = 3_653;

/**
 * `--expires <date|duration>`: when a key expires, in unix seconds. In the future, at most MAX_EXPIRY_DAYS ahead;
 * `name` is the option or argument the message names.
 */
export function expiryOf(v: string, nowMs: number, name = '--expires'): number {
  const nowSec = Math.floor(nowMs / 1000);
  const d = durationSeconds(v);
  const at = d !== undefined ? nowSec + d : momentSeconds(v);
  if (at === undefined)
    throw new AdminError(
      `${name} takes a date (2027-01-31: that day's start, UTC), an ISO time with its zone ` +
        '(2027-01-31T12:00:00Z) or a length from now (90m, 12h, 30d)',
    );
  if (at <= nowSec) throw new AdminError(`${name} must be in the future (now is ${new Date(nowMs).toISOString()})`);
  if (at > nowSec + MAX_EXPIRY_DAYS * 86_400)
    throw new AdminError(`${name} must be at most ${MAX_EXPIRY_DAYS.toLocaleString('en-US')} days (ten years) ahead`);
  return at;
}
