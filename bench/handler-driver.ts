/**
 * One side of the per-handler warm comparison (bench/phases/handlers.ts), in a process of its own: imports a bundle
 * (a function's, or the warm floor's) as Lambda's init does, then invokes its handler in process, warm, as often as
 * it answers, with the events the parent sends:
 *   fork('bench/handler-driver.ts', [bundle.mjs]) ; send {events, connections, seconds, expect} ; receive a Slice
 * `connections` invocations are in flight at once (each starts the next when it answers; Lambda runs one per
 * container, so 16 is 16 containers' worth of work on one event loop, the same for both sides). Each call gets a
 * copy of its event (middy and the handlers write to it). A slice (bench/lib/cell.ts) reports its calls and their
 * latencies, the process's and the main thread's CPU time, the DynamoDB requests (Node's HTTP client diagnostics
 * channel: the bundle is not changed) and lines written, and the answers that were not the expected status.
 */
import { subscribe } from 'node:diagnostics_channel';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Slice } from './lib/cell.ts';

export type CellRequest = {
  readonly events: readonly unknown[];
  readonly connections: number;
  readonly seconds: number;
  /** The status every call must answer; `allow` for an authorizer's policy. */
  readonly expect: number | 'allow';
};

const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
  memoryLimitInMB: '1024',
  awsRequestId: 'bench',
  logGroupName: '/aws/lambda/bench',
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 29_000,
};

/** Garbage collections on the main thread (their pauses stop every call in flight): count and milliseconds. */
const gc = { count: 0, ms: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.count++;
    gc.ms += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

let ddb = 0;
subscribe('http.client.request.start', () => ddb++);
/**
 * Lines written to stdout (log lines and EMF metrics: Powertools prints there): both sides must write the same per
 * call, as they must make the same DynamoDB requests.
 */
let lines = 0;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
  lines++;
  return write(chunk, ...rest);
}) as typeof process.stdout.write;

const mod = (await import(pathToFileURL(process.argv[2]!).href)) as {
  handler: (e: unknown, c: unknown) => Promise<unknown>;
};

const statusOf = (out: unknown): number | 'allow' | string => {
  const o = out as { statusCode?: number; policyDocument?: { Statement?: Array<{ Effect?: string }> } } | undefined;
  if (o?.statusCode !== undefined) return o.statusCode;
  return o?.policyDocument?.Statement?.[0]?.Effect === 'Allow' ? 'allow' : JSON.stringify(out).slice(0, 100);
};

async function run({ events, connections, seconds, expect }: CellRequest): Promise<Slice> {
  const latencies: number[] = [];
  let unexpected = 0;
  let unexpectedSample: string | undefined;
  const answers: Record<string, number> = {};
  let next = 0;
  const ddb0 = ddb;
  const lines0 = lines;
  const gc0 = { ...gc };
  const cpu0 = process.cpuUsage();
  const th0 = process.threadCpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const event = structuredClone(events[next++ % events.length]);
      const t = performance.now();
      let status: number | string;
      try {
        status = statusOf(await mod.handler(event, context));
      } catch (err) {
        status = `threw ${(err as Error).message}`;
      }
      latencies.push(performance.now() - t);
      answers[status] = (answers[status] ?? 0) + 1;
      if (status !== expect) {
        unexpected++;
        unexpectedSample ??= String(status);
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const th = process.threadCpuUsage(th0);
  return {
    calls: latencies.length,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    mainMs: (th.user + th.system) / 1000,
    ddb: ddb - ddb0,
    lines: lines - lines0,
    gcCount: gc.count - gc0.count,
    gcMs: gc.ms - gc0.ms,
    latencies,
    answers,
    unexpected,
    ...(unexpectedSample ? { unexpectedSample } : {}),
  };
}

process.on('message', (m: CellRequest) => {
  void run(m).then(
    (cell) => process.send!(cell),
    (err: unknown) => process.send!({ error: String(err) }),
  );
});
process.send!({ ready: true });
// The parent gone (or done with it): exit, writing a --cpu-prof profile if one was asked for.
process.on('disconnect', () => process.exit(0));
// The phase stops drivers with SIGTERM: exit normally so that a --cpu-prof profile is written.
process.on('SIGTERM', () => process.exit(0));
