/**
 * What deploys is the bundles, not the sources: each function's bundle in the cloud assembly (the same synth the
 * test run's global setup made, esbuild included) loads under Node 24 in a process of its own, with the function's
 * environment from the template, and answers a sample event as Lambda would invoke it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { TABLES } from '../../contract/tables.ts';
import { functionEnvironment } from '../../lib/local/environment.ts';
import { proxyEvent } from '../../lib/local/lambda.ts';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import { apiModel, type FunctionDef } from '../../lib/local/template.ts';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';

const run = promisify(execFile);
const endpoint = inject('dynamoEndpoint');
let assembly: LocalAssembly;
let functions: FunctionDef[];
let tables: Record<string, string>;

/** Imports the bundle, invokes its handler once, prints what it returned or threw. */
const INVOKE = `
const [bundle, event] = [process.argv[1], JSON.parse(process.argv[2])];
const { handler } = await import(bundle);
const context = { awsRequestId: 'bundle-test', functionName: 'bundle-test', getRemainingTimeInMillis: () => 10000 };
try { console.log(JSON.stringify({ result: await handler(event, context) })); }
catch (e) { console.log(JSON.stringify({ error: e.message })); }
process.exit(0);`;

const authorizer = { keyId: 'key_bundle', plan: 'free', perMinute: 60, perDay: 1000, principalId: 'key_bundle' };
const request = (method: string, resourcePath: string, path: string, params: Record<string, string>, body = '') =>
  proxyEvent({
    requestId: 'c0ffee00-0000-4000-8000-000000000000',
    method,
    resourcePath,
    path,
    stage: 'v1',
    rawHeaders: ['Content-Type', 'application/json'],
    search: new URLSearchParams(),
    pathParameters: params,
    body: Buffer.from(body),
    sourceIp: '127.0.0.1',
    protocol: 'HTTP/1.1',
    authorizer,
  });

/** A sample event per handler module and what its answer must be. */
const SAMPLES: Record<string, { event: unknown; expect: (out: { result?: any; error?: string }) => void }> = {
  'lambdas/functions/authorizer.ts': {
    event: {
      type: 'TOKEN',
      authorizationToken: 'Bearer not-a-key',
      methodArn: 'arn:aws:execute-api:us-east-1:123456789012:local/v1/GET/pets',
    },
    expect: (out) => expect(out.error).toBe('Unauthorized'),
  },
  'lambdas/functions/get-pet.ts': {
    event: request('GET', '/pets/{petId}', '/pets/abc', { petId: 'abc' }),
    expect: (out) => expect(out.result).toMatchObject({ statusCode: 400 }),
  },
  'lambdas/functions/list-pets.ts': {
    event: request('GET', '/pets', '/pets', {}),
    expect: (out) => expect(out.result).toMatchObject({ statusCode: 200, body: '[]' }),
  },
  'lambdas/functions/create-pet.ts': {
    event: request('POST', '/pets', '/pets', {}, '{"name":""}'),
    expect: (out) => expect(out.result).toMatchObject({ statusCode: 400 }),
  },
  'lambdas/functions/list-orders.ts': {
    event: request('GET', '/store/orders', '/store/orders', {}),
    expect: (out) => expect(out.result).toMatchObject({ statusCode: 501 }),
  },
};

beforeAll(async () => {
  assembly = await localAssembly({ bundle: true });
  functions = [...apiModel(assembly.template).functions.values()];
  const tableEnv = await provisionLocalTables(endpoint, uniquePrefix());
  tables = Object.fromEntries(TABLES.map((t) => [t.id, tableEnv[t.envVar]!]));
}, 240_000);

describe('bundles in the cloud assembly', () => {
  it('has a bundle and a sample for every function of the template', () => {
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(fn.assetPath, fn.logicalId).toBeDefined();
      expect(Object.keys(SAMPLES), fn.logicalId).toContain(fn.entry);
    }
  });

  it('each loads under Node 24 with its environment from the template and answers its sample event', async () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
    await Promise.all(
      functions.map(async (fn) => {
        const env = {
          PATH: process.env.PATH,
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          ...functionEnvironment(assembly.template, fn, { tables, dynamoEndpoint: endpoint }),
          LOG_LEVEL: 'ERROR',
        };
        const bundle = join(assembly.dir, fn.assetPath!, 'index.mjs');
        const sample = SAMPLES[fn.entry]!;
        const { stdout } = await run(
          process.execPath,
          ['--enable-source-maps', '--input-type=module', '-e', INVOKE, bundle, JSON.stringify(sample.event)],
          { env },
        );
        sample.expect(JSON.parse(stdout.trim().split('\n').at(-1)!));
      }),
    );
  }, 120_000);
});
