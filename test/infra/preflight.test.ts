/**
 * `npm run preflight -- --stage <stage>` as a pipeline runs it before `cdk deploy`: the real command on staging with
 * no AWS credentials (no finding), then against a previous template that an update would replace resources of (one
 * line naming each, exit 1); and the deployed-stack rules on a stand-in for CloudFormation's answers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  authorizationReferenceCheck,
  cdkDiffCheck,
  deployedStackCheck,
  synthCheck,
} from '../../lib/preflight/checks.ts';
import { replacementsInDiff } from '../../lib/preflight/cdk-diff.ts';
import { preflight } from '../../lib/preflight/run.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { preflightCli as runPreflight } from './preflight-cli.ts';
import { sharedTemplateJson } from './shared-synth.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';
import { declaredTable, literally, operationFunction } from './declared.ts';
import { TABLES } from '../../contract/tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'animal-store-preflight-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const preflightCli = (args: string[]) => runPreflight(dir, args);
/** The table the replacements below are made of (any declared table: each is a stateful resource). */
const table = declaredTable(TABLES[0]);
const tableId = literally(table.logicalId);

let staging: CfnTemplate;
beforeAll(() => {
  staging = sharedTemplateJson('staging') as CfnTemplate;
}, 240_000);

it('passes staging as it is, with no AWS credentials (the deployed-stack comparison is skipped, saying so)', async () => {
  const result = await preflightCli(['--stage', 'staging']);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/deployed stack: AnimalStore-staging: no AWS credentials/);
  expect(result.stderr).toMatch(/AnimalStore-account: deployed stack: AnimalStore-account: no AWS credentials/);
  // The account quotas check reads the account's Lambda and API Gateway settings: skipped too, for the stage's stack only.
  expect(result.stderr).toMatch(/note: account quotas: no AWS credentials .*: skipped/);
  expect(result.stderr).not.toMatch(/AnimalStore-account: account quotas/);
  // So does the account share check, which reads the account's other stacks.
  expect(result.stderr).toMatch(/note: account share: no AWS credentials .*: skipped/);
  expect(result.stderr).toMatch(/preflight staging: no finding/);
  expect(result.code).toBe(0);
}, 300_000);

it('fails against a previous template the update would replace resources of, one line naming each', async () => {
  // What the pipeline deployed last, if it had held a table with another key and the secret under another id.
  const previous = structuredClone(staging) as any;
  previous.Resources[table.logicalId].Properties.KeySchema[0].AttributeName = 'legacyId';
  previous.Resources.LegacyCursorSecret = previous.Resources.CursorSecret;
  const path = join(dir, 'previous.json');
  writeFileSync(path, JSON.stringify(previous));
  const result = await preflightCli(['--stage', 'staging', '--previous', path]);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toEqual([
    expect.stringMatching(
      new RegExp(`^update: ${tableId} \\(AWS::DynamoDB::GlobalTable\\) would be replaced: KeySchema changes$`),
    ),
    expect.stringMatching(/^update: LegacyCursorSecret \(AWS::SecretsManager::Secret\) leaves the template/),
  ]);
  expect(result.stderr).toMatch(/preflight staging: 2 finding\(s\)/);
  expect(result.code).toBe(1);
}, 300_000);

it('with credentials: refuses a protected first deploy, the first-deploy switch on a live stack, a replacement', async () => {
  // Production is protected: its first deploy needs the switch. Staging has no protection to strand a create.
  const absent = (stage: 'staging' | 'production', context: Record<string, string>) =>
    preflight({
      stage,
      context,
      exclusively: true,
      checks: [deployedStackCheck],
      deployed: async () => ({ state: 'absent' }),
    });
  expect((await absent('production', { ...PRODUCTION_CONTEXT })).findings).toEqual([
    expect.stringMatching(
      /is absent: deploy it with npx cdk deploy AnimalStore-production -c .* -c animal-store:production:firstDeploy=true,/,
    ),
  ]);
  const first = { ...PRODUCTION_CONTEXT, 'animal-store:production:firstDeploy': 'true' };
  expect((await absent('production', first)).findings).toEqual([]);
  expect((await absent('staging', {})).findings).toEqual([]);
  const live = structuredClone(staging) as any;
  live.Resources[table.logicalId].Properties.KeySchema[0].AttributeName = 'legacy';
  const present = await preflight({
    stage: 'staging',
    context: { 'animal-store:staging:firstDeploy': 'true' },
    exclusively: true,
    checks: [deployedStackCheck],
    deployed: async () => ({
      state: 'present',
      status: 'UPDATE_COMPLETE',
      terminationProtection: false,
      template: live,
    }),
  });
  expect(present.findings).toEqual([
    expect.stringMatching(
      new RegExp(`^update: ${tableId} .* would be replaced: KeySchema changes \\(against the deployed stack\\)$`),
    ),
    expect.stringMatching(/is UPDATE_COMPLETE: it exists, so drop -c animal-store:staging:firstDeploy=true/),
  ]);
}, 240_000);

it('finds a grant AWS can never apply: the deploy role moving aliases granted on the alias ARNs', async () => {
  const doctored = structuredClone(staging) as any;
  const statement = Object.values(doctored.Resources as Record<string, any>)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .find((s) => s.Sid === 'ShiftThisStacksLiveAliases');
  statement.Resource = [statement.Resource].flat().map((arn: unknown) => ({ 'Fn::Join': ['', [arn, ':live']] }));
  const input = { stackName: 'AnimalStore-staging', template: doctored } as Parameters<
    typeof authorizationReferenceCheck.run
  >[0];
  expect(await authorizationReferenceCheck.run({ ...input, template: staging })).toEqual([]);
  const findings = await authorizationReferenceCheck.run(input);
  expect(findings.join('\n')).toMatch(/ShiftThisStacksLiveAliases.*lambda:GetAlias/);
  expect(findings.join('\n')).toMatch(/ShiftThisStacksLiveAliases.*lambda:UpdateAlias/);
});

it("names production's missing context, as cdk deploy would refuse it", async () => {
  const bare = await preflight({ stage: 'production', context: {}, checks: [synthCheck] });
  expect(bare.findings.join('\n')).toMatch(/animal-store:production:account=/);
  expect(bare.findings.join('\n')).toMatch(/animal-store:production:alarmEmails=/);
  const pinned = await preflight({ stage: 'production', context: { ...PRODUCTION_CONTEXT }, checks: [synthCheck] });
  expect(pinned.findings).toEqual([]);
}, 240_000);

// The CLI's own lines (aws-cdk 2.1148's diff formatter: prefix, type, construct path, logical id, impact), for an
// operation's function and a table.
const fn = operationFunction().constructId;
const CDK_DIFF_OUTPUT = `Stack AnimalStore-staging
Resources
[~] AWS::Lambda::Function ${fn}Function ${fn}Function1A2B3C4D
 └─ [~] Environment
[~] AWS::DynamoDB::GlobalTable Data/${table.def.id} ${table.logicalId} replace
 └─ [~] KeySchema (requires replacement)
[~] AWS::ApiGateway::UsagePlanKey UsagePlans/FreePoolMember0001Plan FreePoolMember0001Plan may be replaced
[-] AWS::SecretsManager::Secret CursorSecret orphan
[~] AWS::Lambda::Version ${fn}Function/CurrentVersion ${fn}FunctionCurrentVersionAB12 replace
`;

it('reads cdk diff for replacements and removals of stateful or fixed-name resources only', () => {
  expect(replacementsInDiff(CDK_DIFF_OUTPUT)).toEqual([
    `cdk diff: ${table.logicalId} (AWS::DynamoDB::GlobalTable) replace`,
    'cdk diff: FreePoolMember0001Plan (AWS::ApiGateway::UsagePlanKey) may be replaced',
    'cdk diff: CursorSecret (AWS::SecretsManager::Secret) orphan',
  ]);
  // Colours, as a terminal would get them, change nothing.
  expect(
    replacementsInDiff('\u001b[33m[~]\u001b[39m \u001b[36mAWS::Logs::LogGroup\u001b[39m ApiAccessLogs replace'),
  ).toEqual(['cdk diff: ApiAccessLogs (AWS::Logs::LogGroup) replace']);
});

it('runs cdk diff with the same context only where the deployed stack is visible', async () => {
  const calls: [string, Record<string, string>][] = [];
  const cdkDiff = (stack: string, context: Readonly<Record<string, string>>) => {
    calls.push([stack, { ...context }]);
    return CDK_DIFF_OUTPUT;
  };
  const visible = await preflight({
    stage: 'production',
    context: { ...PRODUCTION_CONTEXT },
    exclusively: true,
    checks: [cdkDiffCheck],
    cdkDiff,
    deployed: async () => ({
      state: 'present',
      status: 'UPDATE_COMPLETE',
      terminationProtection: true,
      template: staging,
    }),
  });
  expect(visible.findings).toHaveLength(3);
  expect(calls).toEqual([['AnimalStore-production', { ...PRODUCTION_CONTEXT }]]);
  const unseen = await preflight({
    stage: 'staging',
    context: {},
    checks: [cdkDiffCheck],
    cdkDiff,
    deployed: async () => ({ state: 'unknown', why: 'no AWS credentials' }),
  });
  expect(unseen.findings).toEqual([]);
  expect(calls).toHaveLength(1);
}, 240_000);
