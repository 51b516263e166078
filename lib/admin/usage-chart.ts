/**
 * The day's minute-by-minute use of a key as a small plain-text chart (`keys usage`), so an admin sees a client's
 * pattern at a glance: steady, bursty, or pressing on its per-minute limit. The counts come from the limiter's
 * minute history (lambdas/storage/usage-history.ts): the day count recorded when each minute opened.
 */
import type { MinuteOpens } from '../../lambdas/storage/usage-history.ts';

export interface MinuteCount {
  /** Unix seconds. */
  readonly minuteStart: number;
  readonly count: number;
}

export interface UsageSeries {
  /** Active minutes only, in time order. */
  readonly minutes: readonly MinuteCount[];
  /** Requests today before the first recorded minute (e.g. counted before the history was kept). */
  readonly unattributed: number;
}

/**
 * Each minute's count is the day count at the next recorded opening minus its own (a request that opens a minute is
 * counted in it); the last minute's runs to the day count now. A lost history write folds a minute into the one
 * before it, never loses requests.
 */
export function minuteCounts(opens: MinuteOpens, dayCountNow: number): UsageSeries {
  if (!opens.length) return { minutes: [], unattributed: dayCountNow };
  const minutes = opens.map((o, i) => {
    const next = i + 1 < opens.length ? opens[i + 1]!.dayCount : dayCountNow + 1;
    return { minuteStart: o.minuteStart, count: Math.max(0, next - o.dayCount) };
  });
  return { minutes: minutes.filter((m) => m.count > 0), unattributed: Math.max(0, opens[0]!.dayCount - 1) };
}

const BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const hhmm = (sec: number) => new Date(sec * 1000).toISOString().slice(11, 16);

export interface ChartOptions {
  /** Start of the UTC day (unix seconds) and the current minute: the chart spans [dayStart, nowMinute]. */
  readonly dayStart: number;
  readonly nowMinute: number;
  /** Columns at most (default 60); each column covers an equal number of minutes. */
  readonly width?: number;
  /** The key's per-minute limit, shown as the scale when known. */
  readonly perMinute?: number;
}

/** A sparkline of the busiest minute per column (the per-minute limit is about peaks, not sums), with axis and peak. */
export function renderUsageChart(series: UsageSeries, o: ChartOptions): string[] {
  const span = Math.floor((o.nowMinute - o.dayStart) / 60) + 1;
  const width = Math.max(10, Math.min(o.width ?? 60, 240));
  const per = Math.ceil(span / Math.min(width, span));
  const columns = new Array<number>(Math.ceil(span / per)).fill(0);
  for (const m of series.minutes) {
    const i = Math.floor((m.minuteStart - o.dayStart) / 60 / per);
    if (i >= 0 && i < columns.length) columns[i] = Math.max(columns[i]!, m.count);
  }
  const peak = series.minutes.reduce<MinuteCount | undefined>(
    (best, m) => (!best || m.count > best.count ? m : best),
    undefined,
  );
  if (!peak) return [`No requests recorded minute by minute today (00:00-${hhmm(o.nowMinute)} UTC).`];
  const top = Math.max(peak.count, 1);
  const line = columns
    .map((c) => (c === 0 ? ' ' : BARS[Math.min(BARS.length - 1, Math.ceil((c / top) * BARS.length) - 1)]))
    .join('');
  const start = '00:00';
  const end = hhmm(o.nowMinute);
  const lines = [
    `Requests per minute today, 00:00-${end} UTC (a column = ${per} min, its busiest minute; █ = ${peak.count}/min):`,
    `|${line}|`,
    ` ${start}${end.padStart(Math.max(line.length - start.length, end.length + 1))}`,
    `Peak ${peak.count}/min at ${hhmm(peak.minuteStart)} UTC${o.perMinute ? ` (${Math.round((peak.count / o.perMinute) * 100)}% of ${o.perMinute}/min)` : ''}; ${series.minutes.length} active minute(s).`,
  ];
  if (series.unattributed) lines.push(`${series.unattributed} earlier request(s) today have no minute breakdown.`);
  return lines;
}

/** Columns for the chart: the terminal's width less the frame, at most 120; 60 when not a terminal. */
export function chartWidth(columns: number | undefined = process.stdout.columns): number {
  return columns ? Math.max(10, Math.min(120, columns - 4)) : 60;
}
