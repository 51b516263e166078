/** Phase 3c, beside the per-handler table (bench/phases/handlers.ts): what the local gateway costs on its own. */
import { printTable, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

/**
 * The local gateway's own cost per request (not deployed: API Gateway does this in AWS): the warm path's API server
 * (phase 3, the gateway emulation with the same handlers behind it) less the in-process handler for the same call.
 */
export function reportGateway(
  { result }: BenchContext,
  rows: ReadonlyArray<{ op: string; key: string; connections: number; ours: { cpuMsPerCall: number } }>,
): void {
  const warm = result.warm as
    { rows: Array<{ key: string; op: string; connections: number; api: { cpuMsPerCall: number } }> } | undefined;
  if (!warm) {
    console.log('\n(The local gateway line needs the warm path: run with --only=warm,handlers or the full bench.)');
    return;
  }
  const lines = warm.rows.flatMap((w) => {
    const h = rows.find((r) => r.op === w.op && r.key === w.key && r.connections === w.connections);
    return h
      ? [{ ...w, handler: h.ours.cpuMsPerCall, gateway: round(w.api.cpuMsPerCall - h.ours.cpuMsPerCall, 3) }]
      : [];
  });
  result.localGateway = lines.map((l) => ({
    op: l.op,
    key: l.key,
    connections: l.connections,
    apiServerCpuMs: l.api.cpuMsPerCall,
    handlerCpuMs: l.handler,
    gatewayCpuMs: l.gateway,
  }));
  printTable(
    '3c. The local gateway (not deployed; API Gateway in AWS): CPU ms per request = the warm path API server (3) less the in-process handler (3b)',
    ['op', 'key', 'conns', 'API server cpu ms/call', 'handler', 'local gateway'],
    lines.map((l) => [l.op, l.key, l.connections, l.api.cpuMsPerCall, l.handler, l.gateway]),
  );
}
