/**
 * The per-handler phase's report (bench/phases/handlers.ts): per cell, each side's medians over the rounds and the
 * ratios' median and spread, the table, the targets, and the local gateway's own cost beside it.
 */
import type { Cell } from '../lib/cell.ts';
import { summarizeGcTrace } from '../lib/gc-trace.ts';
import { median, printTable, ratioCells, round, spreadOf, type Verdict } from '../lib/util.ts';
import type { BenchContext } from './context.ts';
import { reportGateway } from './local-gateway.ts';

export const GOALS = { cpu: 1.1, rps: 0.9, p99: 1.1 } as const;
export const SIDES = ['ours', 'floor'] as const;
export type Side = (typeof SIDES)[number];
/** One cell: an operation (or the authorizer), a key kind, the invocations in flight. */
export type CellKey = { readonly op: string; readonly key: string; readonly connections: number };
export const cellId = (c: CellKey) => `${c.op}|${c.key}|${c.connections}`;

export function reportHandlers(
  ctx: BenchContext,
  cells: readonly CellKey[],
  runs: ReadonlyMap<string, ReadonlyArray<Record<Side, Cell>>>,
  info: { rounds: number; seconds: number; businessKeyIds: number },
): void {
  const { result, target } = ctx;
  const { rounds, seconds } = info;
  const rows = cells.map(({ op, key, connections }) => {
    const rs = runs.get(cellId({ op, key, connections })) ?? [];
    const side = (s: Side) => ({
      rps: round(median(rs.map((x) => x[s].rps)), 0),
      p50: round(median(rs.map((x) => x[s].p50)), 2),
      p99: round(median(rs.map((x) => x[s].p99)), 2),
      cpuMsPerCall: round(median(rs.map((x) => x[s].cpuMsPerCall)), 3),
      mainThreadMsPerCall: round(median(rs.map((x) => x[s].mainMsPerCall)), 3),
      ddbPerCall: round(median(rs.map((x) => x[s].ddbPerCall)), 3),
      linesPerCall: round(median(rs.map((x) => x[s].linesPerCall)), 3),
      gcPer1000: round(median(rs.map((x) => x[s].gcPer1000)), 1),
      gcUsPerCall: round(median(rs.map((x) => x[s].gcUsPerCall)), 1),
      unexpected: rs.reduce((a, x) => a + x[s].unexpected, 0),
      unexpectedSample: rs.find((x) => x[s].unexpectedSample)?.[s].unexpectedSample,
    });
    const ratios = (f: (x: Record<Side, Cell>) => number, meets: (v: number) => boolean) => spreadOf(rs.map(f), meets);
    return {
      op,
      key,
      connections,
      ours: side('ours'),
      floor: side('floor'),
      cpu: ratios(
        (x) => x.ours.cpuMsPerCall / x.floor.cpuMsPerCall,
        (v) => v <= GOALS.cpu,
      ),
      rps: ratios(
        (x) => x.ours.rps / x.floor.rps,
        (v) => v >= GOALS.rps,
      ),
      p99: ratios(
        (x) => x.ours.p99 / x.floor.p99,
        (v) => v <= GOALS.p99,
      ),
    };
  });
  result.handlers = { ...info, rows };
  printTable(
    `3b. Handlers in process, warm (no gateway): each function's bundle vs the floor with the same libraries making the same DynamoDB requests; ${rounds} rounds x ${seconds} s per cell (x floor: median of per-round ratios, spread p25-p75)`,
    [
      'op',
      'key',
      'in flight',
      'cpu ms/call',
      'floor',
      'cpu x',
      'spread',
      'calls/s',
      'floor',
      'x floor',
      'spread',
      'p99 ms',
      'floor',
      'p99 x',
      'spread',
      'ddb/call',
      'floor',
      'lines/call',
      'floor',
      'unexpected',
    ],
    rows.map((w) => [
      w.op,
      w.key,
      w.connections,
      ...ratioCells(w.ours.cpuMsPerCall, w.floor.cpuMsPerCall, w.cpu),
      ...ratioCells(w.ours.rps, w.floor.rps, w.rps),
      ...ratioCells(w.ours.p99, w.floor.p99, w.p99),
      w.ours.ddbPerCall,
      w.floor.ddbPerCall,
      w.ours.linesPerCall,
      w.floor.linesPerCall,
      `${w.ours.unexpected}/${w.floor.unexpected}${w.ours.unexpectedSample ? ` (${w.ours.unexpectedSample})` : ''}${w.floor.unexpectedSample ? ` (floor ${w.floor.unexpectedSample})` : ''}`,
    ]),
  );
  for (const w of rows) {
    // A side that answered otherwise than expected did other work than the other side: its ratios compare nothing.
    const off = w.ours.unexpected + w.floor.unexpected > 0;
    const subject = `${w.op} ${w.key} c=${w.connections}${off ? ' (unexpected answers)' : ''}`;
    const v = (s: { verdict: Verdict }) => (off ? 'NO' : s.verdict);
    target(`handler cpu/call <= ${GOALS.cpu}x floor`, subject, w.cpu.median, `<= ${GOALS.cpu}`, v(w.cpu));
    target(`handler throughput >= ${GOALS.rps}x floor`, subject, w.rps.median, `>= ${GOALS.rps}`, v(w.rps));
    target(`handler p99 <= ${GOALS.p99}x floor`, subject, w.p99.median, `<= ${GOALS.p99}`, v(w.p99));
  }
  reportGateway(ctx, rows);
}

/** `--handlers-trace-gc`: each driver process's settled scavenges, by function, side and process (bench/lib/gc-trace.ts). */
export function reportGcTraces(
  ctx: BenchContext,
  traces: ReadonlyArray<{ fn: string; side: Side; file: string }>,
): void {
  const rows = traces.map((t, i) => ({ ...t, process: i, ...summarizeGcTrace(t.file) }));
  ctx.result.handlersGc = rows;
  printTable(
    "3b'. Each driver's scavenges (--handlers-trace-gc; means of its last 40: the settled state)",
    [
      'function',
      'side',
      'process',
      'scavenges',
      'mark-compacts',
      'pause ms',
      'main ms',
      'helpers ms',
      'survived MB',
      'promoted MB',
    ],
    rows.map((r) => [
      r.fn,
      r.side,
      r.process,
      r.scavenges,
      r.markCompacts,
      round(r.pauseMs, 2),
      round(r.mainMs, 2),
      round(r.helpersMs, 2),
      round(r.survivedMb, 2),
      round(r.promotedMb, 2),
    ]),
  );
}
