/**
 * The cold-start probe, run as a fresh `node` process per sample:
 *   node bench/cold-start.ts <bundle.mjs> <event.json>
 * Imports the bundle (Lambda's init phase) and invokes its handler once (the first invoke), then prints
 * {"initMs","invokeMs","totalMs","status"} as one JSON line. The environment (table names, DYNAMODB_ENDPOINT, ...) comes
 * from the parent.
 */
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
const t0 = performance.now();
const mod = (await import(pathToFileURL(bundlePath!).href)) as {
  handler: (e: unknown, c: unknown) => Promise<unknown>;
};
const t1 = performance.now();
let status: number | string;
try {
  const out = (await mod.handler(event, context)) as { statusCode?: number; principalId?: string };
  status = out?.statusCode ?? (out?.principalId ? 'allow' : 'none');
} catch (err) {
  status = `error: ${(err as Error).message}`;
}
const t2 = performance.now();
process.stdout.write(
  `${JSON.stringify({ initMs: t1 - t0, invokeMs: t2 - t1, totalMs: t2 - t0, processMs: t2, status })}\n`,
);
process.exit(0);
