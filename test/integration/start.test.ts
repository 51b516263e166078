/**
 * `npm start` and the admin tool's `--local` on an existing DynamoDB endpoint (ANIMAL_STORE_DYNAMODB_ENDPOINT): a
 * team's shared DynamoDB Local instead of one started per process. Both run as real processes, as a developer runs
 * them; the test's shared DynamoDB Local stands in for the team's endpoint.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../../lib/local/dynamodb.ts';
import { localClient, localTableEnv } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const endpoint = inject('dynamoEndpoint');
const prefix = uniquePrefix();
const env = {
  ...process.env,
  ANIMAL_STORE_DYNAMODB_ENDPOINT: endpoint,
  ANIMAL_STORE_TABLE_PREFIX: prefix,
  LOG_LEVEL: 'ERROR',
};
let server: ChildProcess;
const lines: string[] = [];

/** Resolves with the first output line matching `re`, once `npm start` printed it. */
function waitForLine(re: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = lines.find((l) => re.test(l));
      if (found) return resolve(found);
      if (server.exitCode !== null) return reject(new Error(`npm start exited: ${lines.join('\n')}`));
      setTimeout(check, 100);
    };
    check();
  });
}

beforeAll(async () => {
  const port = await freePort();
  server = spawn(process.execPath, ['bin/local.ts'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffered = '';
  const collect = (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
  };
  server.stdout!.on('data', collect);
  server.stderr!.on('data', collect);
  await waitForLine(/^Try: curl/);
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
});

it('npm start uses the given endpoint, creates its tables there, and prints the base URL, a key and a curl line', async () => {
  expect(lines.join('\n')).toContain(`DynamoDB at ${endpoint}`);
  // Every page: the shared DynamoDB Local holds every test file's tables, far more than one page of 100.
  const client = localClient(endpoint);
  const TableNames: string[] = [];
  let start: string | undefined;
  do {
    const page = await client.send(new ListTablesCommand(start ? { ExclusiveStartTableName: start } : {}));
    TableNames.push(...(page.TableNames ?? []));
    start = page.LastEvaluatedTableName;
  } while (start);
  expect(TableNames.filter((n) => n.startsWith(`${prefix}-`)).sort()).toEqual(
    Object.values(localTableEnv(prefix)).sort(),
  );
  const url = (await waitForLine(/listening on /)).split(' ').pop()!;
  const key = (await waitForLine(/^API key \(free\): /)).split(' ').pop()!;
  const res = await fetch(`${url}/pets`, { headers: { Authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
});

it("the admin tool's --local writes to the same endpoint: its new key works on the running server", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['bin/admin.ts', 'keys', 'create', '--owner', 'team', '--plan', 'pro', '--local', '--json'],
    { cwd: ROOT, env },
  );
  const created = JSON.parse(stdout) as { key: string };
  const url = (await waitForLine(/listening on /)).split(' ').pop()!;
  const res = await fetch(`${url}/pets`, { headers: { Authorization: `Bearer ${created.key}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('x-ratelimit-limit')).toBe('300');
});
