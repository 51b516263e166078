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
import { PREFLIGHT_CHECKS, runChecks, type DeployedStack, type PreflightCheck } from './checks.ts';
import type { CfnTemplate } from './template.ts';

export const USAGE = `Usage: npm run preflight -- --stage <${STAGE_NAMES.join('|')}> [--previous <template.json>] [-c key=value]...
  --previous   the template deployed last (e.g. kept from the last pipeline run): fail on any replacement of a
               stateful or fixed-name resource against it
  -c           context, as for cdk deploy (production: -c animal-store:production:account=… -c …alarmEmails=…)
  With AWS credentials, the deployed stack's template is compared too.`;

type Meta = { readonly type: string; readonly data: unknown };

interface Synthesized {
  readonly template: CfnTemplate;
  readonly templatePath: string;
  readonly errors: string[];
  readonly terminationProtection: boolean;
  readonly cleanup: () => void;
}

/** The app synthesized in-process as `cdk synth` would, and this stack's errors (annotations, cdk-nag). */
async function synthesize(stackName: string, context: Record<string, string>): Promise<Synthesized> {
  const { createApp } = await import('../stacks/app.ts');
  const outdir = mkdtempSync(join(tmpdir(), 'animal-store-preflight-'));
  const cleanup = () => rmSync(outdir, { recursive: true, force: true });
  const { app } = createApp({
    outdir,
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
  });
  const errors: string[] = [];
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
          if (String(c.constructPath).startsWith(`${stackName}/`))
            errors.push(`cdk-nag: ${v.ruleName} on ${c.constructPath}: ${v.description}`);
    if (!report.pluginReports.length) throw e;
  }
  // The stack's annotations: in the manifest, or in the file it names (additionalMetadataFile).
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
  const artifact = manifest.artifacts[stackName];
  const extra: Record<string, Meta[]> = artifact?.additionalMetadataFile
    ? JSON.parse(readFileSync(join(outdir, artifact.additionalMetadataFile), 'utf8'))
    : {};
  for (const entries of [...Object.values(artifact?.metadata ?? {}), ...Object.values(extra)])
    for (const m of entries) if (m.type === 'aws:cdk:error') errors.push(`synth: ${String(m.data)}`);
  const templatePath = join(outdir, `${stackName}.template.json`);
  return {
    template: JSON.parse(readFileSync(templatePath, 'utf8')),
    templatePath,
    errors,
    terminationProtection: artifact?.properties?.terminationProtection === true,
    cleanup,
  };
}

/** The deployed stack through CloudFormation, with this machine's AWS credentials (none: unknown, not a finding). */
async function deployedStack(stackName: string): Promise<DeployedStack> {
  const { CloudFormationClient, DescribeStacksCommand, GetTemplateCommand } =
    await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({});
  try {
    await client.config.credentials();
    await client.config.region();
  } catch (e) {
    return { state: 'unknown', why: `no AWS credentials or region (${(e as Error).message.split('\n')[0]})` };
  }
  try {
    const described = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const status = described.Stacks?.[0]?.StackStatus ?? 'UNKNOWN';
    const got = await client.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }));
    return { state: 'present', status, template: JSON.parse(got.TemplateBody ?? '{"Resources":{}}') };
  } catch (e) {
    if (/does not exist/.test((e as Error).message)) return { state: 'absent' };
    throw e;
  } finally {
    client.destroy();
  }
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
}

/** Findings (one line each) and notes (checks skipped) for one stage. */
export async function preflight(opts: PreflightOptions): Promise<{ findings: string[]; notes: string[] }> {
  const { firstDeployContextKey } = await import('../stacks/first-deploy.ts');
  const stackName = STAGES[opts.stage].stackName;
  const synthesized = await synthesize(stackName, opts.context);
  const notes: string[] = [];
  const key = firstDeployContextKey(opts.stage);
  let deployed: Promise<DeployedStack> | undefined;
  try {
    const findings = await runChecks(
      {
        stage: opts.stage,
        stackName,
        templatePath: synthesized.templatePath,
        template: synthesized.template,
        synthErrors: synthesized.errors,
        terminationProtection: synthesized.terminationProtection,
        previous: opts.previous,
        context: opts.context,
        cdkDiff: opts.cdkDiff,
        firstDeploy: opts.context[key] === 'true',
        firstDeployKey: key,
        // Asked once, however many checks need it.
        deployed: () => (deployed ??= (opts.deployed ?? deployedStack)(stackName)),
        note: (line) => notes.push(line),
      },
      opts.checks ?? PREFLIGHT_CHECKS,
    );
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
  const context: Record<string, string> = {};
  for (const kv of values.context ?? []) {
    const at = kv.indexOf('=');
    if (at < 1) return (err(`error: -c takes key=value, got "${kv}"\n${USAGE}`), 2);
    context[kv.slice(0, at)] = kv.slice(at + 1);
  }
  let previous: CfnTemplate | undefined;
  if (values.previous) {
    try {
      previous = JSON.parse(readFileSync(values.previous, 'utf8'));
    } catch (e) {
      return (err(`error: --previous ${values.previous}: ${(e as Error).message}`), 2);
    }
  }
  const { findings, notes } = await preflight({ stage, previous, context });
  for (const n of notes) err(`note: ${n}`);
  for (const f of findings) out(f);
  err(findings.length ? `preflight ${stage}: ${findings.length} finding(s)` : `preflight ${stage}: no finding`);
  return findings.length ? 1 : 0;
}
