/**
 * The local API (lib/local/app.ts: the real gateway emulation, authorizer and handlers) in a process of its own, so
 * autocannon in the parent does not share its event loop:
 *   node bench/api-server.ts <dynamoEndpoint> <tablePrefix> <on|off>
 * Prints {"url", "statsUrl", "authTtlSeconds"} once listening; GET statsUrl answers {"ddb": DynamoDB requests its
 * functions made so far (authorizer included), "throttled": invocations refused past a reserved concurrency,
 * "cpuMicros": the process's CPU time}. Tables and keys are provisioned by the parent.
 */
import { startLocalApi } from '../lib/local/app.ts';
import { concurrencyOf } from '../lib/local/lambda.ts';
import { startStatsServer } from './lib/stats-server.ts';

const [dynamoEndpoint, tablePrefix, limiter] = process.argv.slice(2);
const api = await startLocalApi({
  dynamoEndpoint: dynamoEndpoint!,
  tablePrefix: tablePrefix!,
  env: { RATE_LIMITER: limiter === 'off' ? 'off' : 'on', LOG_LEVEL: 'WARN' },
  // It measures a call's cost at as many calls a second as it takes: more on one method than a stage may admit.
  stageThrottle: false,
});
let ddbRequests = 0;
for (const f of api.functions.values())
  for (const client of [f.runtime.storage.ddb, f.runtime.storage.once.ddb])
    client.middlewareStack.add((next) => (args) => (ddbRequests++, next(args)), { step: 'initialize', name: 'count' });
// Invocations refused past a function's reserved concurrency (the authorizer's, sized from the stage's throttle), as
// Lambda refuses them: API Gateway answers each 503 (AUTHORIZER_FAILURE), which the warm table then names.
const throttled = () => [...api.functions.values()].reduce((a, f) => a + concurrencyOf(f).throttled, 0);
const statsUrl = await startStatsServer(() => ({ ddb: ddbRequests, throttled: throttled() }));
const authTtlSeconds = Math.max(...[...api.model.authorizers.values()].map((a) => a.ttlSeconds));
process.stdout.write(`${JSON.stringify({ url: api.url, statsUrl, authTtlSeconds })}\n`);
process.on('SIGTERM', () => void api.close().finally(() => process.exit(0)));
