/**
 * The local API (lib/local/app.ts: the real gateway emulation, authorizer and handlers) in a process of its own, so
 * autocannon in the parent does not share its event loop:
 *   node bench/api-server.ts <dynamoEndpoint> <tablePrefix> <on|off>
 * Prints {"url": …} once listening. Tables and the bench key are provisioned by the parent.
 */
import { startLocalApi } from '../lib/local/app.ts';

const [dynamoEndpoint, tablePrefix, limiter] = process.argv.slice(2);
const api = await startLocalApi({
  dynamoEndpoint: dynamoEndpoint!,
  tablePrefix: tablePrefix!,
  env: { RATE_LIMITER: limiter === 'off' ? 'off' : 'on', LOG_LEVEL: 'WARN' },
});
process.stdout.write(`${JSON.stringify({ url: api.url })}\n`);
process.on('SIGTERM', () => void api.close().finally(() => process.exit(0)));
