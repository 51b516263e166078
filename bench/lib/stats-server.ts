/**
 * A bench server's side door:
 *   GET  /         its counters as JSON: what the server passes (DynamoDB requests made so far), and the CPU time its
 *                  process has used (user + system, microseconds), so a cell's CPU per call is known;
 *   POST /profile  starts the V8 CPU profiler in the process (`npm run bench -- --only=warm --cpu-prof`);
 *   GET  /profile  stops it and answers the profile (.cpuprofile JSON), covering exactly the measured rounds.
 */
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';

export function startStatsServer(stats: () => Record<string, number>): Promise<string> {
  let session: Session | undefined;
  const server = createServer((req, res) => {
    const answer = (body: unknown) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/profile' && req.method === 'POST') {
      session = new Session();
      session.connect();
      void session
        .post('Profiler.enable')
        .then(() => session!.post('Profiler.setSamplingInterval', { interval: 200 }))
        .then(() => session!.post('Profiler.start'))
        .then(() => answer({ profiling: true }));
      return;
    }
    if (req.url === '/profile' && session) {
      const s = session;
      session = undefined;
      void s.post('Profiler.stop').then(({ profile }) => {
        s.disconnect();
        answer(profile);
      });
      return;
    }
    const cpu = process.cpuUsage();
    answer({ ...stats(), cpuMicros: cpu.user + cpu.system });
  });
  server.unref();
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/`)),
  );
}
