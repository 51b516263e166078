/**
 * Every variant of the app the docs tell a platform engineer to synthesize, written as CloudFormation templates to
 * a folder (in-process synth, bundling skipped: the templates are the same but for asset hashes), so tools that read
 * templates as CloudFormation does (cfn-lint, the dependency graph) see each one.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLES } from '../../contract/tables.ts';
import { existingTableContextKey, STAGE_NAMES } from '../../lib/config/stages.ts';
import { BREAK_GLASS_CONTEXT } from '../../lib/stacks/animal-store-stack.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

/** The context switches README.md and docs/deployment.md document, each a variant of the default synth. */
export const VARIANTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  // Staging as is; production with its account and alarm e-mails (the README's deploy line).
  default: {},
  // An existing SNS topic instead of e-mails, for both stages.
  'alarm-topic': Object.fromEntries(
    STAGE_NAMES.flatMap((stage) => [
      [`animal-store:${stage}:alarmTopicArn`, `arn:aws:sns:eu-west-1:123456789012:${stage}-alarms`],
      [`animal-store:${stage}:alarmEmails`, ''],
    ]),
  ),
  // One deploy with no alarm gate (docs/deployment.md, "Break glass").
  'break-glass': { [BREAK_GLASS_CONTEXT]: 'the live version answers 429 to everyone; this deploy ships the fix' },
  // Each stack's first deploy, without the protections that would strand a failed create (docs/deployment.md,
  // "A failed first deploy").
  'first-deploy': Object.fromEntries([...STAGE_NAMES, 'account'].map((name) => [firstDeployContextKey(name), 'true'])),
  // Restored tables pointed at instead of created (docs/deployment.md, "Restoring a table").
  'existing-tables': Object.fromEntries(
    STAGE_NAMES.flatMap((stage) =>
      TABLES.map((t) => [existingTableContextKey(stage, t.id), `restored-${stage}-${t.id.toLowerCase()}`]),
    ),
  ),
};

/** Synthesizes each variant into its own folder; returns the template files, by variant. */
export function synthesizeVariants(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, context] of Object.entries(VARIANTS)) {
    const outdir = mkdtempSync(join(tmpdir(), `animal-store-${name}-`));
    createApp({ context: { ...SYNTH_CONTEXT, ...context }, outdir }).app.synth();
    out[name] = readdirSync(outdir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => join(outdir, f));
  }
  return out;
}
