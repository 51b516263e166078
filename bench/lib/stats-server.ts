/**
 * A bench server's side door: GET answers its counters as JSON: what the server passes (DynamoDB requests made so
 * far), and the CPU time its process has used (user + system, microseconds), so a cell's CPU per call is known.
 */
import { createServer } from 'node:http';

export function startStatsServer(stats: () => Record<string, number>): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const cpu = process.cpuUsage();
    res.end(JSON.stringify({ ...stats(), cpuMicros: cpu.user + cpu.system }));
  });
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/`)),
  );
}
