/** The usage chart's arithmetic and drawing on made-up minute histories (no clock, no storage). */
import { describe, expect, it } from 'vitest';
import { minuteCounts, renderUsageChart } from '../../lib/admin/usage-chart.ts';

const DAY = 1_795_305_600; // 2026-11-22T00:00:00Z
const at = (h: number, m: number) => DAY + h * 3600 + m * 60;

describe('minuteCounts', () => {
  it('derives each minute from the day count at the next opening, the last from the count now', () => {
    // 10 requests at 00:00, 5 at 00:01, none until 03:30, then 2 so far.
    const opens = [
      { minuteStart: at(0, 0), dayCount: 1 },
      { minuteStart: at(0, 1), dayCount: 11 },
      { minuteStart: at(3, 30), dayCount: 16 },
    ];
    expect(minuteCounts(opens, 17)).toEqual({
      minutes: [
        { minuteStart: at(0, 0), count: 10 },
        { minuteStart: at(0, 1), count: 5 },
        { minuteStart: at(3, 30), count: 2 },
      ],
      unattributed: 0,
    });
  });

  it('reports requests before the first recorded minute as unattributed, and everything so when nothing is recorded', () => {
    expect(minuteCounts([{ minuteStart: at(1, 0), dayCount: 41 }], 45).unattributed).toBe(40);
    expect(minuteCounts([], 7)).toEqual({ minutes: [], unattributed: 7 });
  });
});

describe('renderUsageChart', () => {
  it('draws the busiest minute per column within the width, with the time axis and the peak against the limit', () => {
    const series = minuteCounts(
      [
        { minuteStart: at(0, 0), dayCount: 1 },
        { minuteStart: at(6, 0), dayCount: 31 },
        { minuteStart: at(12, 0), dayCount: 91 },
      ],
      105,
    ); // 30 requests at 00:00, 60 at 06:00, 15 at 12:00
    const lines = renderUsageChart(series, { dayStart: DAY, nowMinute: at(23, 59), width: 48, perMinute: 60 });
    const bar = lines[1]!;
    expect(bar).toMatch(/^\|.{48}\|$/u);
    expect([...bar.slice(1, -1)]).toHaveLength(48);
    expect(bar[1]).toBe('▄'); // 30 of a 60 peak
    expect(bar[1 + 12]).toBe('█'); // 06:00 in column 12 (30 minutes per column)
    expect(bar[1 + 24]).toBe('▂'); // 15 at 12:00
    expect(bar.slice(2, 13).trim()).toBe('');
    expect(lines[0]).toContain('a column = 30 min');
    expect(lines[2]).toMatch(/^ 00:00 +23:59$/);
    expect(lines[3]).toBe('Peak 60/min at 06:00 UTC (100% of 60/min); 3 active minute(s).');
  });

  it('says so when nothing is recorded, and never draws wider than asked early in the day', () => {
    expect(renderUsageChart({ minutes: [], unattributed: 0 }, { dayStart: DAY, nowMinute: at(0, 5) })).toEqual([
      'No requests recorded minute by minute today (00:00-00:05 UTC).',
    ]);
    const early = renderUsageChart(minuteCounts([{ minuteStart: at(0, 2), dayCount: 1 }], 3), {
      dayStart: DAY,
      nowMinute: at(0, 5),
      width: 60,
    });
    expect(early[1]).toBe('|  █   |');
  });
});
