/**
 * The cloud assembly the local gateway runs: the staging stack synthesized offline by the project's own stack
 * class, at most once per state of the sources. The assembly is cached on disk (node_modules/.cache/animal-store)
 * under a hash of everything the template and the bundles depend on, so `npm start`, every test worker and the
 * bundle test share one synth; aws-cdk-lib is only imported on a cache miss.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP_SOURCES, cacheFolders, contentHash, PROJECT_ROOT as ROOT, pruneCache } from './content-cache.ts';
import type { CfnTemplate } from './template.ts';

const CACHE_NAME = 'animal-store';
/** What the template and the bundles are built from; how the stack is synthesized here is an input too. */
const INPUTS = [
  ...APP_SOURCES,
  'lib/api',
  'lib/config',
  'lib/constructs',
  'lib/stacks',
  // The canary constructs read the preflight's timing rules.
  'lib/preflight/canary-timing.ts',
  'lib/preflight/template.ts',
  'lib/local/synth.ts',
];
/** Cached assemblies kept besides the newest (other branches, other options). */
const KEEP = 6;

export interface SynthOptions {
  /** The stage whose configuration the stack is built with. @default 'staging' */
  readonly stage?: 'staging' | 'production';
  /** Run esbuild for the functions (the bundle test needs them; the gateway does not). @default false */
  readonly bundle?: boolean;
  /** Browser origins allowed by CORS, instead of the stage's (tests of the CORS preflight). @default - the stage's */
  readonly corsAllowedOrigins?: readonly string[];
}

export interface LocalAssembly {
  /** The cloud assembly directory (manifest.json, `<stack>.template.json`, `asset.*` bundles when bundled). */
  readonly dir: string;
  readonly stackName: string;
  readonly template: CfnTemplate;
  readonly bundled: boolean;
}

/** A hash of the inputs' contents and the options: the cache key. */
export function sourceHash(opts: SynthOptions): string {
  return contentHash(
    ROOT,
    INPUTS,
    JSON.stringify({ stage: opts.stage ?? 'staging', cors: opts.corsAllowedOrigins ?? null, node: process.version }),
  );
}

function read(dir: string): LocalAssembly {
  const info = JSON.parse(readFileSync(join(dir, 'local.json'), 'utf8')) as { stackName: string; bundled: boolean };
  const template = JSON.parse(readFileSync(join(dir, `${info.stackName}.template.json`), 'utf8')) as CfnTemplate;
  return { dir, template, ...info };
}

/** The context cdk.json gives every `cdk synth` and `cdk deploy`. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

async function synthesize(outdir: string, opts: SynthOptions): Promise<void> {
  const [{ App }, { AnimalStoreStack }, { STAGES }] = await Promise.all([
    import('aws-cdk-lib'),
    import('../stacks/animal-store-stack.ts'),
    import('../config/stages.ts'),
  ]);
  const base = STAGES[opts.stage ?? 'staging'];
  const stage = opts.corsAllowedOrigins ? { ...base, corsAllowedOrigins: [...opts.corsAllowedOrigins] } : base;
  const app = new App({
    outdir,
    context: {
      // cdk.json's context (its feature flags), as `cdk synth` passes it: without them the access-log destination,
      // the deployment's logical id and its DependsOn differ from the deployed template.
      ...cdkJsonContext(),
      'aws:cdk:bundling-stacks': opts.bundle ? [stage.stackName] : [],
      // Records each function's asset directory on its resource (aws:asset:path), as the CLI does.
      'aws:cdk:enable-asset-metadata': true,
    },
  });
  // Environment-agnostic, like an offline `cdk synth` with no account or region set.
  new AnimalStoreStack(app, stage.stackName, { stage, stackName: stage.stackName });
  app.synth();
  writeFileSync(join(outdir, 'local.json'), JSON.stringify({ stackName: stage.stackName, bundled: !!opts.bundle }));
}

/**
 * The synthesized stack for these options: from the cache, else synthesized now (and cached). A bundled assembly
 * also serves a request that needs no bundles.
 */
export async function localAssembly(opts: SynthOptions = {}): Promise<LocalAssembly> {
  const key = sourceHash(opts);
  const { cache, tmp } = cacheFolders(CACHE_NAME);
  const bundledDir = join(cache, `${key}-bundled`);
  const plainDir = join(cache, key);
  if (existsSync(join(bundledDir, 'local.json'))) return read(bundledDir);
  if (!opts.bundle && existsSync(join(plainDir, 'local.json'))) return read(plainDir);
  const target = opts.bundle ? bundledDir : plainDir;
  try {
    await synthesize(tmp, opts);
    // Another process may have written the same entry meanwhile: both are the same synth, keep theirs.
    if (!existsSync(target)) renameSync(tmp, target);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  pruneCache(cache, /^[0-9a-f]{20}(-bundled)?$/, KEEP);
  return read(target);
}
