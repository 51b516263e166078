/** A bench server's side door: GET answers its counters as JSON (DynamoDB requests made so far). */
import { createServer } from 'node:http';

export function startStatsServer(stats: () => Record<string, number>): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(stats()));
  });
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/`)),
  );
}
