/**
 * What deploys is the bundles, not the sources: each function's bundle in the cloud assembly (the same synth the
 * test run's global setup made, esbuild included) loads under Node 24 in a process of its own, with the function's
 * environment from the template, and answers a sample event as Lambda would invoke it: each operation's sample
 * request from test/helpers/samples.ts (with data of its own), with the status a user would get.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { TABLES } from '../../contract/tables.ts';
import { functionEnvironment } from '../../lib/local/environment.ts';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import { apiModel, type FunctionDef } from '../../lib/local/template.ts';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { AUTHORIZER, BASE_PATH, ROUTES } from '../../contract/routes.ts';
import { fixturesSending, proxyEventOf, sampleRequest } from '../helpers/samples.ts';
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
/** Runs a function's bundle in a process of its own, with its environment from the template, on one event. */
async function invoke(fn: FunctionDef, event: unknown): Promise<{ result?: any; error?: string }> {
  const env = {
    PATH: process.env.PATH,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    ...functionEnvironment(assembly.template, fn, { tables, dynamoEndpoint: endpoint }),
    LOG_LEVEL: 'ERROR',
  };
  const bundle = join(assembly.dir, fn.assetPath!, 'index.mjs');
  const { stdout } = await run(
    process.execPath,
    ['--enable-source-maps', '--input-type=module', '-e', INVOKE, bundle, JSON.stringify(event)],
    { env },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { result?: any; error?: string };
}

/** What the samples name is made by the creator's own bundle, from its sample. */
const fixtures = fixturesSending(async (r) => {
  const out = await invoke(
    functions.find((f) => f.name === r.operationId)!,
    proxyEventOf(r, authorizer),
  );
  return JSON.parse(out.result?.body ?? 'null') as unknown;
});

interface Sample {
  readonly event: unknown;
  readonly expect: (out: { result?: any; error?: string }) => void;
}

/** The sample event of a function (by its name) and what its answer must be; every route's from its sample. */
async function sampleOf(name: string): Promise<Sample | undefined> {
  if (name === AUTHORIZER.name)
    return {
      event: {
        type: 'TOKEN',
        authorizationToken: 'Bearer not-a-key',
        methodArn: `arn:aws:execute-api:us-east-1:123456789012:local${BASE_PATH}/${ROUTES[0].method}${ROUTES[0].path}`,
      },
      expect: (out) => expect(out.error).toBe('Unauthorized'),
    };
  const route = ROUTES.find((r) => r.operationId === name);
  if (!route) return undefined;
  const request = await sampleRequest(route, fixtures);
  return {
    event: proxyEventOf(request, authorizer),
    expect: (out) => expect(out.result, route.operationId).toMatchObject({ statusCode: request.status }),
  };
}

beforeAll(async () => {
  assembly = await localAssembly({ bundle: true });
  functions = [...apiModel(assembly.template).functions.values()];
  const tableEnv = await provisionLocalTables(endpoint, uniquePrefix());
  tables = Object.fromEntries(TABLES.map((t) => [t.id, tableEnv[t.envVar]!]));
}, 240_000);

describe('bundles in the cloud assembly', () => {
  it('has a bundle and a sample for every function of the template', async () => {
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(fn.assetPath, fn.logicalId).toBeDefined();
      expect(await sampleOf(fn.name), fn.logicalId).toBeDefined();
    }
  });

  it('carries the libraries the project names: zod and Powertools Logger everywhere, the rest where they are used', () => {
    const OPERATION_LIBRARIES = [
      'zod',
      '@aws-lambda-powertools/logger',
      '@aws-lambda-powertools/metrics',
      '@middy/core',
    ];
    /** Packages beyond those, by the functions that use one (from their route entries): only those carry it. */
    const ONLY: Record<string, readonly string[]> = {
      '@middy/http-json-body-parser': ROUTES.filter((r) => r.request.body !== undefined).map((r) => r.operationId),
      '@aws-sdk/client-secrets-manager': ROUTES.filter((r) => r.access.cursorSecret).map((r) => r.operationId),
      // RFC 8785 canonical JSON, for the Idempotency-Key fingerprint: the operations that honour that header.
      canonicalize: ROUTES.filter((r) => r.errors.some((e) => e.codes.includes('idempotency_key_reused'))).map(
        (r) => r.operationId,
      ),
    };
    for (const fn of functions) {
      const map = JSON.parse(readFileSync(join(assembly.dir, fn.assetPath!, 'index.mjs.map'), 'utf8')) as {
        sources: string[];
      };
      // Source paths are relative to the bundle (in the synth cache, itself under node_modules): a package's files
      // are under a folder of its name.
      const carries = (pkg: string) => map.sources.some((s) => s.startsWith(`${pkg}/`) || s.includes(`/${pkg}/`));
      const expected = fn.name === AUTHORIZER.name ? ['zod', '@aws-lambda-powertools/logger'] : OPERATION_LIBRARIES;
      for (const pkg of expected) expect(carries(pkg), `${fn.logicalId} carries ${pkg}`).toBe(true);
      for (const [pkg, owner] of Object.entries(ONLY))
        expect(carries(pkg), `${fn.logicalId} carries ${pkg}`).toBe(owner.includes(fn.name));
      // No second validation engine: nothing of the project's stands in for a library.
      expect(
        map.sources.filter((s) => /zod-lite/.test(s)),
        fn.logicalId,
      ).toEqual([]);
    }
  });

  it('each loads under Node 24 with its environment from the template and answers its sample event', async () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
    await Promise.all(
      functions.map(async (fn) => {
        const sample = (await sampleOf(fn.name))!;
        sample.expect(await invoke(fn, sample.event));
      }),
    );
  }, 120_000);
});
