/**
 * Phase 2b: what each library the functions are built on costs, beside the results: its minified bytes and its init
 * time, each measured as the difference between a bundle that uses it (a small entry, so tree-shaking keeps what a
 * function keeps) and the same bundle without it, with the shared esbuild config; init time is the median of A/B
 * rounds of fresh processes of the CPU time the import takes (the cold-start probe's initCpuMs: a loaded machine
 * disturbs CPU time far less than wall time). The SDK's Secrets Manager client is priced on top of
 * the DynamoDB client, with which it shares the SDK's core, as in listPets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, bundle, type BundleResult } from '../lib/bundle.ts';
import { median, printTable, round, runChild } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

const HANDLER = 'export const handler = async () => ({ statusCode: 200 });';
const DOC = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
export const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
export const get = new GetCommand({ TableName: 't', Key: { id: 1 } });`;
const MIDDY = `import middy from '@middy/core';
export const m = middy().handler(async () => 1);`;

interface Library {
  readonly name: string;
  /** Which functions carry it. */
  readonly carriedBy: string;
  /** The entry without it (the name of another entry, or '' for an empty one). */
  readonly base: string;
  readonly source: string;
}

const LIBRARIES: readonly Library[] = [
  { name: 'DocumentClient', carriedBy: 'all five', base: '', source: DOC },
  {
    name: 'zod/mini (+ English messages)',
    carriedBy: 'all five',
    base: 'DocumentClient',
    source: `${DOC}
import * as z from 'zod/mini';
import { en } from 'zod/locales';
z.config(en());
export const s = z.strictObject({ name: z.string().check(z.minLength(1)), id: z.int(), st: z.optional(z.enum(['a', 'b'])) });
s.safeParse({ name: 'x', id: 1 });`,
  },
  { name: '@middy/core', carriedBy: 'the four operations', base: 'DocumentClient', source: `${DOC}\n${MIDDY}` },
  {
    name: '@middy/http-json-body-parser',
    carriedBy: 'createPet',
    base: '@middy/core',
    source: `${DOC}\n${MIDDY}
import parser from '@middy/http-json-body-parser';
export const p = middy().use(parser()).handler(async () => 1);`,
  },
  {
    name: 'Powertools Logger (+ injectLambdaContext)',
    carriedBy: 'all five',
    base: 'DocumentClient',
    source: `${DOC}
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
export const logger = new Logger({ serviceName: 's', logLevel: 'WARN' });
export const mw = injectLambdaContext(logger);`,
  },
  {
    name: 'Powertools Metrics (+ logMetrics)',
    carriedBy: 'all five',
    base: 'DocumentClient',
    source: `${DOC}
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
export const metrics = new Metrics({ namespace: 'N', serviceName: 's' });
export const mw = logMetrics(metrics);`,
  },
  {
    name: '@aws-sdk/client-secrets-manager',
    carriedBy: 'listPets',
    base: 'DocumentClient',
    source: `${DOC}
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
export const sm = new SecretsManagerClient({ region: 'us-east-1', maxAttempts: 3 });
export const cmd = new GetSecretValueCommand({ SecretId: 'x' });`,
  },
];

/** Under node_modules (ignored by git), so the entries resolve the project's packages. */
const DIR = join(ROOT, 'node_modules', '.cache', 'bench-libraries');

export async function runLibraryPrices({ P, result, log }: BenchContext): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  const file = (name: string, source: string) => {
    const path = join(DIR, `${name.replace(/[^a-z0-9]+/gi, '-')}.ts`);
    writeFileSync(path, `${source}\n${HANDLER}\n`);
    return path;
  };
  const event = join(DIR, 'event.json');
  writeFileSync(event, '{}');
  const built = new Map<string, BundleResult>();
  built.set('', await bundle('empty', file('empty', ''), join(DIR, 'out')));
  for (const l of LIBRARIES)
    built.set(l.name, await bundle(l.name.replace(/[^a-z0-9]+/gi, '-'), file(l.name, l.source), join(DIR, 'out')));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, AWS_REGION: 'us-east-1' };
  const probe = join(ROOT, 'bench/cold-start.ts');
  const initOf = async (b: BundleResult) =>
    (await runChild<{ initCpuMs: number }>([probe, b.outfile, event], env)).initCpuMs;
  log(`library prices: ${P.coldRounds} A/B rounds x ${LIBRARIES.length} libraries`);
  await initOf(built.get('')!); // warms the OS file cache
  const rows = [];
  for (const l of LIBRARIES) {
    const [withIt, without] = [built.get(l.name)!, built.get(l.base)!];
    const deltas: number[] = [];
    for (let r = 0; r < P.coldRounds; r++) {
      // Alternating order, so neither side always runs second.
      let a: number;
      let b: number;
      if (r % 2) {
        a = await initOf(withIt);
        b = await initOf(without);
      } else {
        b = await initOf(without);
        a = await initOf(withIt);
      }
      deltas.push(a - b);
    }
    rows.push({
      library: l.name,
      carriedBy: l.carriedBy,
      over: l.base || 'an empty bundle',
      minBytes: withIt.minBytes - without.minBytes,
      initMs: round(median(deltas), 1),
      initMsSpread: [round(Math.min(...deltas), 1), round(Math.max(...deltas), 1)],
    });
  }
  result.libraryPrices = rows;
  printTable(
    `2b. Library prices: bytes and init CPU ms each adds to a bundle (median of ${P.coldRounds} A/B rounds of a fresh process's import)`,
    ['library', 'carried by', 'over', 'min KB', 'init CPU ms', 'min to max'],
    rows.map((r) => [
      r.library,
      r.carriedBy,
      r.over,
      r.minBytes / 1024,
      r.initMs,
      `${r.initMsSpread[0]} to ${r.initMsSpread[1]}`,
    ]),
  );
}
