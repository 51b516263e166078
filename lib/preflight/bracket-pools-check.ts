/**
 * The Enterprise bracket pools check of `npm run preflight` (bracket-pools.ts), and where its reads come from: the
 * admin tool's own adapters for the stage (lib/admin/targets.ts: the stack's outputs name the keys table and the
 * API), so the check reads what `keys reconcile --all` will write, through the same names. Without AWS credentials
 * it is skipped with a note, as the deployed-stack check is.
 */
import { AdminError } from '../admin/ports.ts';
import type { StageName } from '../config/stage-names.ts';
import { bracketPoolFindings, readFailureFinding, type BracketReads } from './bracket-pools.ts';
import type { PreflightCheck } from './checks.ts';

/** The reads for a stage, or why there are none (a note), or a finding (the stack's outputs could not be read). */
export type BracketReadsSource = (
  stage: StageName,
) => Promise<BracketReads | { readonly skip: string } | { readonly finding: string }>;

/** The stage's adapters as the admin tool builds them for `--stage`, with this machine's credentials. */
export const awsBracketReads: BracketReadsSource = async (stage) => {
  const { machineCredentialsProblem } = await import('./deployed.ts');
  const why = await machineCredentialsProblem();
  if (why) return { skip: why };
  const { realDeps } = await import('../admin/targets.ts');
  try {
    const deps = await realDeps({ local: false, stage });
    return { stage, store: deps.store, gateway: deps.gateway };
  } catch (err) {
    const message = (err as Error)?.message ?? '';
    // No stack yet (a first deploy), or one without the outputs (a create that failed): no keys table holds a key,
    // so no bracket is in use; the deployed-stack check names that stack's next step.
    if (/does not exist/.test(message))
      return { skip: `the stage's stack does not exist yet, so no bracket is in use` };
    if (err instanceof AdminError) return { skip: message };
    return { finding: readFailureFinding("the stage's stack outputs (DescribeStacks)", err) };
  }
};

/** The check; `source` is a stand-in in tests. Only the stage's own stack has brackets (not AnimalStore-account). */
export function bracketPoolsCheck(source: BracketReadsSource = awsBracketReads): PreflightCheck {
  return {
    name: 'Enterprise bracket pools',
    run: async (input) => {
      if (input.name !== input.stage) return [];
      const reads = await source(input.stage as StageName);
      if ('skip' in reads) {
        input.note(`Enterprise bracket pools: ${reads.skip}: skipped`);
        return [];
      }
      if ('finding' in reads) return [reads.finding];
      return bracketPoolFindings(reads);
    },
  };
}
