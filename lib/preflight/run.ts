/**
 * `npm run preflight -- --stage <stage> [--previous <template.json>] [-c key=value]…`: before `cdk deploy`, the
 * stage's template synthesized as `cdk synth` does (cdk.json's context, the given `-c` values, cdk-nag on; bundling
 * skipped: the templates differ only in asset hashes), then every check of PREFLIGHT_CHECKS. One line per finding;
 * exit 1 when there is one, 2 on bad usage, 0 otherwise.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../command-line.ts';
import { STAGE_NAMES, STAGES, type StageName } from '../config/stages.ts';
import { cdkJsonContext } from '../local/synth.ts';
import { ACCOUNT_SETTINGS_STACK } from '../stacks/account-settings-stack.ts';
import { PREFLIGHT_CHECKS, previousTemplateCheck, runChecks, type PreflightCheck } from './checks.ts';
import { contextOf } from './context-words.ts';
import { deployedStack, type DeployedStack } from './deployed.ts';
import type { CfnTemplate } from './template.ts';

export const USAGE = `Usage: npm run preflight -- --stage <${STAGE_NAMES.join('|')}> [--previous <template.json>] [--exclusively] [-c key=value]...
  --previous   the template deployed last (e.g. kept from the last pipeline run): fail on any replacement of a
               stateful or fixed-name resource against it, or on a stack this release cannot follow
  --exclusively  as cdk deploy --exclusively: the stage's stack alone (else AnimalStore-account too, which
               cdk deploy AnimalStore-<stage> deploys first)
  -c           context, as for cdk deploy (production: -c animal-store:production:account=… -c …alarmEmails=…)
  With AWS credentials, the deployed stack's template is compared too.`;

type Meta = { readonly type: string; readonly data: unknown };

interface SynthesizedStack {
  readonly template: CfnTemplate;
  readonly templatePath: string;
  readonly errors: string[];
  readonly terminationProtection: boolean;
}

/** The app synthesized in-process as `cdk synth` would, and each named stack's errors (annotations, cdk-nag). */
async function synthesize(
  stackNames: readonly string[],
  context: Record<string, string>,
): Promise<{ stacks: Map<string, SynthesizedStack>; cleanup: () => void }> {
  const { createApp } = await import('../stacks/app.ts');
  const outdir = mkdtempSync(join(tmpdir(), 'animal-store-preflight-'));
  const cleanup = () => rmSync(outdir, { recursive: true, force: true });
  const { app } = createApp({
    outdir,
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
  });
  const errors = new Map(stackNames.map((n) => [n, [] as string[]]));
  try {
    app.synth();
  } catch (e) {
    // cdk-nag reports through the validation framework: a failed validation throws after writing its report.
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
      pluginReports: { pluginName: string; violations: any[] }[];
    };
    for (const plugin of report.pluginReports)
      for (const v of plugin.violations)
        for (const c of v.violatingConstructs ?? [])
          errors
            .get(String(c.constructPath).split('/')[0]!)
            ?.push(`cdk-nag: ${v.ruleName} on ${c.constructPath}: ${v.description}`);
    if (!report.pluginReports.length) throw e;
  }
  // Each stack's annotations: in the manifest, or in the file it names (additionalMetadataFile).
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<
      string,
      {
        metadata?: Record<string, Meta[]>;
        additionalMetadataFile?: string;
        properties?: { terminationProtection?: boolean };
      }
    >;
  };
  const stacks = new Map<string, SynthesizedStack>();
  for (const stackName of stackNames) {
    const artifact = manifest.artifacts[stackName];
    const extra: Record<string, Meta[]> = artifact?.additionalMetadataFile
      ? JSON.parse(readFileSync(join(outdir, artifact.additionalMetadataFile), 'utf8'))
      : {};
    const stackErrors = errors.get(stackName)!;
    for (const entries of [...Object.values(artifact?.metadata ?? {}), ...Object.values(extra)])
      for (const m of entries) if (m.type === 'aws:cdk:error') stackErrors.push(`synth: ${String(m.data)}`);
    const templatePath = join(outdir, `${stackName}.template.json`);
    stacks.set(stackName, {
      template: JSON.parse(readFileSync(templatePath, 'utf8')),
      templatePath,
      errors: stackErrors,
      terminationProtection: artifact?.properties?.terminationProtection === true,
    });
  }
  return { stacks, cleanup };
}

export interface PreflightOptions {
  readonly stage: StageName;
  readonly previous?: CfnTemplate;
  readonly context: Record<string, string>;
  readonly checks?: PreflightCheck[];
  /** @default `npx cdk diff` */
  readonly cdkDiff?: (stackName: string, context: Readonly<Record<string, string>>) => string;
  /** @default CloudFormation with this machine's credentials */
  readonly deployed?: (stackName: string) => Promise<DeployedStack>;
  /** As `cdk deploy --exclusively`: the stage's stack alone, not the account stack it depends on. */
  readonly exclusively?: boolean;
}

/**
 * The stacks `cdk deploy AnimalStore-<stage>` deploys, in its order: the account stack first (the stages depend on
 * it; `--exclusively` leaves it out), then the stage's, each with the name its first-deploy switch uses.
 */
export function stacksDeployed(stage: StageName, exclusively: boolean): { stackName: string; name: string }[] {
  const own = { stackName: STAGES[stage].stackName, name: stage };
  return exclusively ? [own] : [{ stackName: ACCOUNT_SETTINGS_STACK, name: 'account' }, own];
}

/**
 * Findings (one line each) and notes (checks skipped) for every stack the stage's deploy deploys. The stage's own
 * lines come as they are; another stack's (the account stack's) start with its name.
 */
export async function preflight(opts: PreflightOptions): Promise<{ findings: string[]; notes: string[] }> {
  const { firstDeployContextKey } = await import('../stacks/first-deploy.ts');
  const targets = stacksDeployed(opts.stage, opts.exclusively ?? false);
  const synthesized = await synthesize(
    targets.map((t) => t.stackName),
    opts.context,
  );
  const notes: string[] = [];
  const findings: string[] = [];
  try {
    for (const { stackName, name } of targets) {
      const stack = synthesized.stacks.get(stackName)!;
      const own = name === opts.stage;
      const named = (line: string) => (own ? line : `${stackName}: ${line}`);
      const key = firstDeployContextKey(name);
      let deployed: Promise<DeployedStack> | undefined;
      const lines = await runChecks(
        {
          stage: opts.stage,
          stackName,
          name,
          templatePath: stack.templatePath,
          template: stack.template,
          synthErrors: stack.errors,
          terminationProtection: stack.terminationProtection,
          // --previous is the stage's template.
          previous: own ? opts.previous : undefined,
          context: opts.context,
          cdkDiff: opts.cdkDiff,
          firstDeploy: opts.context[key] === 'true',
          firstDeployKey: key,
          // Asked once, however many checks need it.
          deployed: () => (deployed ??= (opts.deployed ?? deployedStack)(stackName)),
          note: (line) => notes.push(named(line)),
        },
        (opts.checks ?? PREFLIGHT_CHECKS).filter((c) => own || c !== previousTemplateCheck),
      );
      findings.push(...lines.map(named));
    }
    return { findings, notes };
  } finally {
    synthesized.cleanup();
  }
}

/** The command line: exit code 0 (no finding), 1 (findings, one line each on stdout), 2 (bad usage). */
export async function main(argv: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const parsed = parseCommandLine(
    argv,
    {
      stage: { type: 'string' },
      previous: { type: 'string' },
      exclusively: { type: 'boolean', short: 'e' },
      context: { type: 'string', short: 'c', multiple: true },
    },
    USAGE,
    out,
    err,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  const stage = values.stage as StageName;
  if (!STAGE_NAMES.includes(stage))
    return (err(`error: --stage must be one of ${STAGE_NAMES.join(', ')}\n${USAGE}`), 2);
  const context = contextOf(values.context ?? []);
  if (typeof context === 'string') return (err(`error: ${context}\n${USAGE}`), 2);
  let previous: CfnTemplate | undefined;
  if (values.previous) {
    try {
      previous = JSON.parse(readFileSync(values.previous, 'utf8'));
    } catch (e) {
      return (err(`error: --previous ${values.previous}: ${(e as Error).message}`), 2);
    }
  }
  const exclusively = values.exclusively === true;
  const { findings, notes } = await preflight({ stage, previous, context, exclusively });
  for (const n of notes) err(`note: ${n}`);
  for (const f of findings) out(f);
  err(findings.length ? `preflight ${stage}: ${findings.length} finding(s)` : `preflight ${stage}: no finding`);
  return findings.length ? 1 : 0;
}
