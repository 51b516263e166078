/**
 * `--timeout <seconds>` and `--attempts <n>`: the admin's DynamoDB client is built with them (the real target,
 * realDeps), and a DynamoDB slower than the timeout fails the command naming --timeout, with the same command given
 * longer as its next step. The defaults finish a 100,000-key sweep on moto: bench/admin-sweep.ts measures that (too
 * slow for a test).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { realDeps, runAdmin } from '../../lib/admin/cli.ts';
import { ADMIN_DYNAMODB } from '../../lib/admin/targets.ts';

/** A "DynamoDB" that takes every request and answers none, counting them. */
let slow: Server;
let received = 0;
let endpoint: string;
const saved = { ...process.env };
beforeAll(async () => {
  slow = createServer(() => {
    received++;
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
  process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT = endpoint;
  process.env.ANIMAL_STORE_TABLE_PREFIX = 'timeout-test';
});
afterAll(async () => {
  process.env = saved;
  slow.closeAllConnections();
  await new Promise((r) => slow.close(r));
});

it("builds the admin's DynamoDB client with the timeout and attempts asked, and with the defaults otherwise", async () => {
  const asked = await realDeps({ local: true, dynamodb: { timeoutMs: 45_000, attempts: 7 } });
  expect(await asked.storage!.ddb.config.maxAttempts()).toBe(7);
  const handler = asked.storage!.ddb.config.requestHandler as unknown as { configProvider: Promise<object> };
  expect(await handler.configProvider).toMatchObject({ requestTimeout: 45_000 });
  // The counting client still makes one attempt: a resent count could count twice.
  expect(await asked.storage!.once.ddb.config.maxAttempts()).toBe(1);
  const defaults = await realDeps({ local: true });
  expect(await defaults.storage!.ddb.config.maxAttempts()).toBe(ADMIN_DYNAMODB.attempts);
});

it('a DynamoDB slower than --timeout: each attempt is cut at the timeout, and the failure names --timeout', async () => {
  received = 0;
  const err: string[] = [];
  const t0 = Date.now();
  const code = await runAdmin(
    ['keys', 'show', 'key_1', '--local', '--json', '--timeout', '1', '--attempts', '2'],
    { out: () => undefined, err: (l) => err.push(l) },
    realDeps,
  );
  const took = Date.now() - t0;
  expect(code).toBe(1);
  expect(received).toBe(2);
  // Two attempts of a second each, and the SDK's pause between them: not the defaults' minutes.
  expect(took).toBeGreaterThanOrEqual(2_000);
  expect(took).toBeLessThan(10_000);
  const r = JSON.parse(err.at(-1)!) as { error: string; next: string };
  expect(r.error).toMatch(/DynamoDB did not answer \((TimeoutError|ETIMEDOUT)\)/);
  expect(r.error).toContain('it waited 1 s per attempt, 2 attempt(s): give it longer with --timeout <seconds>');
  expect(r.next).toBe('npm run admin -- keys show key_1 --local --json --timeout 2 --attempts 2');
}, 30_000);
