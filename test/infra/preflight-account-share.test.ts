/**
 * Preflight's account-share check (lib/preflight/account-share.ts): the stages deployed in one account and Region may
 * claim at most the whole account between them. The arithmetic on stand-in readings (shares that fit pass, shares
 * past 1 are refused in one line naming each stack's share and the `-c` values that fix it, a stage's stack without
 * the AccountShare output counts 1, a stack not there or holding nothing counts 0); then the real reads, with the
 * SDK's own client, against moto's CloudFormation (skipped, saying so, where moto_server is not installed); then the
 * `-c` value the finding names, synthesized into the template the check reads.
 */
import { CloudFormationClient, CreateStackCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  accountShareCheck,
  accountShareFindings,
  countedShares,
  parseShare,
  readSharingStacks,
  templateShare,
  type AccountShareSource,
  type SharingStack,
} from '../../lib/preflight/account-share.ts';
import type { PreflightInput } from '../../lib/preflight/checks.ts';
import { preflight } from '../../lib/preflight/run.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { OUTPUT_IDS } from '../../lib/stacks/outputs.ts';
import { MOTO_INSTALL, motoEnv, motoServerPath, startMoto, useEnv, type Moto } from '../helpers/moto.ts';
import { notAuthorized } from '../helpers/aws-wire-stand-ins.ts';

const STAGING = 'AnimalStore-staging';
const PRODUCTION = 'AnimalStore-production';

/** A template as preflight synthesizes it, reduced to its share (none: a release before the output). */
const templateOf = (share?: string): CfnTemplate =>
  ({ Resources: {}, ...(share ? { Outputs: { [OUTPUT_IDS.accountShare]: { Value: share } } } : {}) }) as CfnTemplate;

const deployed = (stackName: string, accountShare?: string, status = 'UPDATE_COMPLETE'): SharingStack => ({
  stackName,
  status,
  ...(accountShare === undefined ? {} : { accountShare }),
});

/** The finding for staging at `share` beside these stacks. */
const stagingBeside = (share: number, stacks: SharingStack[]) =>
  accountShareFindings({ stage: 'staging', stackName: STAGING, share, others: countedShares(STAGING, stacks) });

describe('shares that sum past the account', () => {
  it('passes shares that sum to at most 1, decimal sums included', () => {
    expect(stagingBeside(0.2, [deployed(PRODUCTION, '0.8')])).toEqual([]);
    expect(stagingBeside(0.1, [deployed(PRODUCTION, '0.7'), deployed('AnimalStore-loadtest', '0.2')])).toEqual([]);
    // Alone in the account, the whole of it.
    expect(stagingBeside(1, [])).toEqual([]);
  });

  it('refuses shares past 1 in one line: each stack’s share, and the -c value that fixes it', () => {
    expect(stagingBeside(0.5, [deployed(PRODUCTION, '0.8')])).toEqual([
      'account share: AnimalStore-staging 0.5 (this deploy) + AnimalStore-production 0.8 = 1.3 of this account and ' +
        "Region's API throttle and Lambda concurrency, past 1: each stage is sized for throughput only one can get, " +
        "so load on one takes the other's customers to 429. Set shares that sum to at most 1: deploy this one with " +
        '-c animal-store:staging:accountShare=0.2; or deploy each stage to an account of its own (the default: ' +
        '-c animal-store:<stage>:account=…)',
    ]);
  });

  it('counts a stage’s stack without the AccountShare output as the whole account', () => {
    // Production deployed before the output: sized to the whole account, so it must be deployed again first.
    const [line] = stagingBeside(0.2, [deployed(PRODUCTION)]);
    expect(line).toMatch(
      /^account share: AnimalStore-staging 0\.2 \(this deploy\) \+ AnimalStore-production 1 \(no AccountShare output: sized to the whole account\) = 1\.2 /,
    );
    expect(line).toContain('deploy AnimalStore-production first with -c animal-store:production:accountShare=0.8;');
    // Both at the default 1: both named, production first.
    expect(stagingBeside(1, [deployed(PRODUCTION)])[0]).toContain(
      'deploy AnimalStore-production first with -c animal-store:production:accountShare=0.5, then deploy this one ' +
        'with -c animal-store:staging:accountShare=0.5;',
    );
    // An unreadable value counts 1 too, and says so.
    expect(stagingBeside(0.5, [deployed(PRODUCTION, 'lots')])[0]).toContain(
      'AnimalStore-production 1 (AccountShare "lots" unreadable)',
    );
  });

  it('counts a stack that is not there, or holds nothing, as 0; an unrelated stack without the output not at all', () => {
    expect(stagingBeside(1, [])).toEqual([]);
    for (const status of ['ROLLBACK_COMPLETE', 'REVIEW_IN_PROGRESS', 'DELETE_COMPLETE'])
      expect(stagingBeside(1, [deployed(PRODUCTION, undefined, status)])).toEqual([]);
    expect(stagingBeside(1, [deployed('AnimalStore-account'), deployed('CDKToolkit')])).toEqual([]);
    // Its own stack is the one this deploy replaces.
    expect(stagingBeside(1, [deployed(STAGING, '1')])).toEqual([]);
  });

  it('counts another stack with an AccountShare output, though it is no stage of this app', () => {
    const [line] = stagingBeside(0.5, [deployed(PRODUCTION, '0.5'), deployed('AnimalStore-perf', '0.3')]);
    expect(line).toContain('+ AnimalStore-production 0.5 + AnimalStore-perf 0.3 = 1.3 ');
    expect(line).toContain('deploy this one with -c animal-store:staging:accountShare=0.2;');
    // Where this stage's share leaves no room, the others shrink, named by what sets them.
    const [tight] = stagingBeside(0.99, [deployed(PRODUCTION, '0.5'), deployed('AnimalStore-perf', '0.5')]);
    expect(tight).toContain("lower AnimalStore-perf's AccountShare to 0.25 first");
  });

  it('reads this deploy’s share from the synthesized template’s output (none: 1)', () => {
    expect(templateShare(templateOf('0.2'))).toBe(0.2);
    expect(templateShare(templateOf())).toBe(1);
    expect([parseShare('0'), parseShare('1.5'), parseShare(''), parseShare('1')]).toEqual([
      undefined,
      undefined,
      undefined,
      1,
    ]);
  });
});

describe('as a preflight check', () => {
  const notes: string[] = [];
  const input = (share?: string, name = 'staging') =>
    ({
      stage: 'staging',
      name,
      stackName: name === 'staging' ? STAGING : 'AnimalStore-account',
      template: templateOf(share),
      context: {},
      note: (l: string) => notes.push(l),
    }) as unknown as PreflightInput;
  const source =
    (stacks: SharingStack[]): AccountShareSource =>
    async () => ({ stacks });

  it('refuses past 1 and passes within, asks nothing for the account stack, skips without credentials', async () => {
    expect(await accountShareCheck(source([deployed(PRODUCTION, '0.8')])).run(input('0.2'))).toEqual([]);
    expect(await accountShareCheck(source([deployed(PRODUCTION, '0.8')])).run(input('0.3'))).toEqual([
      expect.stringMatching(/^account share: .* = 1\.1 .*-c animal-store:staging:accountShare=0\.2;/),
    ]);
    const never: AccountShareSource = async () => {
      throw new Error('not asked');
    };
    expect(await accountShareCheck(never).run(input('1', 'account'))).toEqual([]);
    expect(await accountShareCheck(async () => ({ skip: 'no AWS credentials' })).run(input('1'))).toEqual([]);
    expect(notes).toEqual(['account share: no AWS credentials: skipped']);
    expect(await accountShareCheck(async () => ({ finding: 'denied' })).run(input('1'))).toEqual(['denied']);
  });
});

const MOTO = motoServerPath();
const SKIPPED = `moto_server is not installed, so the account-share reads are not run against moto: ${MOTO_INSTALL}`;
if (!MOTO) console.warn(SKIPPED);

describe.skipIf(!MOTO)('the reads, against moto’s CloudFormation', () => {
  let moto: Moto;
  let restoreEnv: (() => void) | undefined;
  let cfn: CloudFormationClient;
  beforeAll(async () => {
    moto = await startMoto();
    restoreEnv = useEnv(motoEnv(moto));
    cfn = new CloudFormationClient(moto.config);
  }, 90_000);
  afterAll(async () => {
    cfn?.destroy();
    restoreEnv?.();
    await moto?.stop();
  });
  beforeEach(async () => {
    await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
  });

  /** A stack of that name with these outputs (a placeholder resource: a stack needs one). */
  const create = (stackName: string, outputs: Record<string, string> = {}) =>
    cfn.send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
  const notes: string[] = [];
  const run = (share: string) =>
    accountShareCheck().run({
      stage: 'staging',
      name: 'staging',
      stackName: STAGING,
      template: templateOf(share),
      context: {},
      note: (l: string) => notes.push(l),
    } as unknown as PreflightInput);

  it('lists every stack: the other stage’s share, a stage without the output, another stack’s output', async () => {
    // Nothing deployed: the whole account is staging's to take.
    expect(await run('1')).toEqual([]);
    await create(PRODUCTION, { [OUTPUT_IDS.accountShare]: '0.8' });
    await create(STAGING, { [OUTPUT_IDS.accountShare]: '1' });
    await create('AnimalStore-account');
    expect(await run('0.2')).toEqual([]);
    expect(await run('0.25')).toEqual([
      expect.stringMatching(
        /^account share: AnimalStore-staging 0\.25 \(this deploy\) \+ AnimalStore-production 0\.8 = 1\.05 .*-c animal-store:staging:accountShare=0\.2;/,
      ),
    ]);
    await create('AnimalStore-perf', { [OUTPUT_IDS.accountShare]: '0.1' });
    expect(await run('0.2')).toEqual([expect.stringContaining('+ AnimalStore-perf 0.1 = 1.1 ')]);
    expect(notes).toEqual([]);
  });

  it('counts a stage deployed before the output as the whole account', async () => {
    await create(PRODUCTION, { [OUTPUT_IDS.apiUrl]: 'https://x.example/v1/' });
    expect(await run('0.2')).toEqual([
      expect.stringContaining(
        'AnimalStore-production 1 (no AccountShare output: sized to the whole account) = 1.2 of this account',
      ),
    ]);
  });

  it('pages through a long list of stacks', async () => {
    // DescribeStacks pages (moto at 50 stacks a page): the share that matters on the last page still counts.
    for (let i = 0; i < 60; i++) await create(`Other-${i}`);
    await create(PRODUCTION, { [OUTPUT_IDS.accountShare]: '0.9' });
    expect((await readSharingStacks(cfn, STAGING)).stacks.map((s) => s.stackName)).toContain(PRODUCTION);
    expect(await run('0.2')).toEqual([expect.stringContaining('= 1.1 ')]);
  }, 60_000);

  it('with credentials that may describe only named stacks: the stages’ stacks by name, and a note', async () => {
    await create(PRODUCTION, { [OUTPUT_IDS.accountShare]: '0.9' });
    await create('AnimalStore-perf', { [OUTPUT_IDS.accountShare]: '0.5' });
    const denied = Object.assign(new Error(notAuthorized('cloudformation:DescribeStacks')), {
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    const namedOnly = {
      send: (command: DescribeStacksCommand) => (command.input.StackName ? cfn.send(command) : Promise.reject(denied)),
    } as unknown as CloudFormationClient;
    const read = await readSharingStacks(namedOnly, STAGING);
    expect(read.stacks.map((s) => [s.stackName, s.accountShare])).toEqual([[PRODUCTION, '0.9']]);
    expect(read.note).toMatch(
      /could not list the account's stacks \(AccessDenied\).*grant cloudformation:DescribeStacks on \*/,
    );
  });
});

describe('the -c value the finding names', () => {
  it('sets the share in the template the check reads', async () => {
    const stacks: SharingStack[] = [deployed(PRODUCTION, '0.8')];
    const run = (context: Record<string, string>) =>
      preflight({
        stage: 'staging',
        context,
        exclusively: true,
        checks: [accountShareCheck(async () => ({ stacks }))],
      });
    const [line] = (await run({})).findings;
    expect(line).toMatch(
      /^account share: AnimalStore-staging 1 \(this deploy\) \+ AnimalStore-production 0\.8 = 1\.8 /,
    );
    const fix = /-c animal-store:staging:accountShare=([\d.]+)/.exec(line!)!;
    expect(await run({ 'animal-store:staging:accountShare': fix[1]! })).toEqual({ findings: [], notes: [] });
  }, 240_000);
});
