/**
 * The cold-start probe, run as a fresh `node` process per sample:
 *   node bench/cold-start.ts <bundle.mjs> <event.json>
 * Imports the bundle (Lambda's init phase) and invokes its handler once (the first invoke), then prints
 * {"initMs","initCpuMs","invokeMs","invokeCpuMs","totalCpuMs","totalMs","status","requests","inSequence","toFirstRequestMs"} as one JSON line
 * (initCpuMs: the process's CPU time spent importing, which other load on the machine disturbs less): besides the
 * times, the DynamoDB requests the process made (init included), how many of them ran one after another (the
 * longest chain of requests each started after the one before it answered), and how long the invoke ran before its
 * first request left (Node's HTTP client diagnostics channels: no change to the bundle). The environment (table
 * names, DYNAMODB_ENDPOINT, ...) comes from the parent.
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [bundlePath, eventPath] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventPath!, 'utf8')) as unknown;
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'bench',
  awsRequestId: 'bench',
  getRemainingTimeInMillis: () => 29_000,
};
type Request = { readonly start: number; end?: number; readonly depth: number };
const requests = new Map<object, Request>();
subscribe('http.client.request.start', (m) => {
  const start = performance.now();
  const answered = [...requests.values()].filter((r) => r.end !== undefined && r.end <= start);
  requests.set((m as { request: object }).request, { start, depth: 1 + Math.max(0, ...answered.map((r) => r.depth)) });
});
subscribe('http.client.response.finish', (m) => {
  const r = requests.get((m as { request: object }).request);
  if (r) r.end = performance.now();
});
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const mod = (await import(pathToFileURL(bundlePath!).href)) as {
  handler: (e: unknown, c: unknown) => Promise<unknown>;
};
const t1 = performance.now();
const cpu1 = process.cpuUsage(cpu0);
let status: number | string;
try {
  const out = (await mod.handler(event, context)) as { statusCode?: number; principalId?: string };
  status = out?.statusCode ?? (out?.principalId ? 'allow' : 'none');
} catch (err) {
  status = `error: ${(err as Error).message}`;
}
const t2 = performance.now();
const cpu2 = process.cpuUsage(cpu0);
const all = [...requests.values()];
const firstInInvoke = Math.min(...all.filter((r) => r.start >= t1).map((r) => r.start));
process.stdout.write(
  `${JSON.stringify({
    initMs: t1 - t0,
    initCpuMs: (cpu1.user + cpu1.system) / 1000,
    invokeMs: t2 - t1,
    invokeCpuMs: (cpu2.user + cpu2.system - cpu1.user - cpu1.system) / 1000,
    totalCpuMs: (cpu2.user + cpu2.system) / 1000,
    totalMs: t2 - t0,
    processMs: t2,
    status,
    requests: all.length,
    inSequence: Math.max(0, ...all.map((r) => r.depth)),
    toFirstRequestMs: Number.isFinite(firstInInvoke) ? firstInInvoke - t1 : null,
  })}\n`,
);
process.exit(0);
