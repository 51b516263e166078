/**
 * Both stages' templates as the infrastructure tests synthesize them (SYNTH_CONTEXT: cdk.json's flags, no bundling,
 * production's required context), synthesized at most once per state of the sources and cached on disk
 * (node_modules/.cache/animal-store-infra/<hash>/), as lib/local/synth.ts does for the local gateway. One synth of
 * the app takes 15-20 s on 2 cores; two dozen test files each doing their own made the infra tests too slow for the
 * fast check (`npm run check`). A file that needs the app itself (annotations, cdk-nag, the assembly) still builds
 * one; a file that reads templates reads these.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Token, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { APP_SOURCES, cacheFolders, contentHash, PROJECT_ROOT, pruneCache } from '../../lib/local/content-cache.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

/** What the templates are built from: the app's code and declarations, its context, and this file. */
const INPUTS = [...APP_SOURCES, 'lib', 'test/infra/synth-context.ts', 'test/infra/shared-synth.ts'];
/** Cached syntheses kept besides the newest (other branches). */
const KEEP = 4;

/** The account settings stack's key, besides the stages'. */
export const ACCOUNT = 'account';
export type SharedStack = StageName | typeof ACCOUNT;

/** Where a stack is deployed, as its template cannot say: its name, and its account and Region where pinned. */
export interface SharedStackInfo {
  readonly stackName: string;
  /** Absent for an environment-agnostic stack (the template says `AWS::AccountId`). */
  readonly account?: string;
  readonly region?: string;
}

let dir: string | undefined;

/** The cache directory holding `<stage>.template.json` for every stage: synthesized now on a miss. */
function cached(): string {
  if (dir) return dir;
  const { cache, tmp } = cacheFolders('animal-store-infra');
  const target = join(cache, contentHash(PROJECT_ROOT, INPUTS, process.version));
  if (!existsSync(join(target, 'done'))) {
    mkdirSync(tmp);
    try {
      const { stacks, accountSettings } = createApp({ context: { ...SYNTH_CONTEXT } });
      const all = [...STAGE_NAMES.map((n) => [n, stacks[n]] as const), [ACCOUNT, accountSettings] as const];
      for (const [name, stack] of all)
        writeFileSync(join(tmp, `${name}.template.json`), JSON.stringify(Template.fromStack(stack).toJSON()));
      const info = (stack: Stack): SharedStackInfo => ({
        stackName: stack.stackName,
        account: Token.isUnresolved(stack.account) ? undefined : stack.account,
        region: Token.isUnresolved(stack.region) ? undefined : stack.region,
      });
      writeFileSync(join(tmp, 'stacks.json'), JSON.stringify(Object.fromEntries(all.map(([n, s]) => [n, info(s)]))));
      writeFileSync(join(tmp, 'done'), '');
      // Another worker may have written the same entry meanwhile: both are the same synth, keep theirs.
      if (!existsSync(join(target, 'done'))) {
        rmSync(target, { recursive: true, force: true });
        renameSync(tmp, target);
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    pruneCache(cache, /^[0-9a-f]{20}$/, KEEP);
  }
  return (dir = target);
}

/** A stack's synthesized template as CloudFormation JSON: a fresh copy, which the caller may change. */
export function sharedTemplateJson(stage: SharedStack): any {
  return JSON.parse(readFileSync(join(cached(), `${stage}.template.json`), 'utf8'));
}

/** Every stage's synthesized template (fresh copies). */
export function sharedTemplatesJson(): Record<StageName, any> {
  return Object.fromEntries(STAGE_NAMES.map((n) => [n, sharedTemplateJson(n)])) as Record<StageName, any>;
}

/** A stack's name, account and Region. */
export function sharedStackInfo(stack: SharedStack): SharedStackInfo {
  return (JSON.parse(readFileSync(join(cached(), 'stacks.json'), 'utf8')) as Record<SharedStack, SharedStackInfo>)[
    stack
  ];
}

/** A stack's synthesized template for the assertions library. */
export const sharedTemplate = (stage: SharedStack): Template =>
  Template.fromJSON(sharedTemplateJson(stage), { skipCyclicalDependenciesCheck: true });
