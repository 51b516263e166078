/**
 * The cross-service confused-deputy guard, on every stack the app deploys (both stages and the account stack): an
 * AWS service may act on a role or resource of ours only on behalf of this account. Every trust or resource-policy
 * statement whose principal is a service carries aws:SourceAccount (or an aws:SourceArn naming this account); a
 * Lambda permission for a service names its SourceAccount or a SourceArn of this account.
 */
import { beforeAll, expect, it } from 'vitest';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { ACCOUNT, sharedStackInfo, sharedTemplateJson, type SharedStackInfo } from './shared-synth.ts';

/** Every stack the app deploys: where it is, and its template's resources. */
let stacks: (SharedStackInfo & { key: string; resources: Record<string, any> })[];
beforeAll(() => {
  stacks = ([...STAGE_NAMES, ACCOUNT] as const).map((key) => ({
    ...sharedStackInfo(key),
    key,
    resources: sharedTemplateJson(key).Resources,
  }));
}, 240_000);

/** The statements of every policy document a resource carries, with where each is. */
function serviceStatements(resources: Record<string, any>): { where: string; statement: any }[] {
  const out: { where: string; statement: any }[] = [];
  for (const [id, r] of Object.entries(resources)) {
    const p = r.Properties ?? {};
    const docs: [string, any][] = [
      ['trust', p.AssumeRolePolicyDocument],
      ['policy', p.PolicyDocument],
      ['key policy', p.KeyPolicy],
    ];
    for (const [what, doc] of docs)
      for (const statement of doc?.Statement ?? [])
        if (statement.Principal?.Service) out.push({ where: `${id} ${what}`, statement });
  }
  return out;
}

/** This account, as the template spells it: a pinned account, or the pseudo parameter. */
const accountOf = (stack: SharedStackInfo) => stack.account ?? { Ref: 'AWS::AccountId' };
const mentions = (value: unknown, account: unknown) =>
  JSON.stringify(value).includes(JSON.stringify(account).slice(1, -1));

it('every service principal acts only on behalf of this account, in every stack', () => {
  const offenders: string[] = [];
  let seen = 0;
  for (const stack of stacks) {
    const { resources } = stack;
    const account = accountOf(stack);
    for (const { where, statement } of serviceStatements(resources)) {
      seen++;
      const c = statement.Condition ?? {};
      const sourceAccount = Object.values(c).some(
        (op: any) => op?.['aws:SourceAccount'] !== undefined && mentions(op['aws:SourceAccount'], account),
      );
      const sourceArn = Object.values(c).some(
        (op: any) => op?.['aws:SourceArn'] !== undefined && mentions(op['aws:SourceArn'], account),
      );
      if (!sourceAccount && !sourceArn)
        offenders.push(`${stack.stackName} ${where}: ${JSON.stringify(statement.Principal.Service)}`);
    }
    for (const [id, r] of Object.entries(resources)) {
      if (r.Type !== 'AWS::Lambda::Permission' || !String(r.Properties.Principal).endsWith('.amazonaws.com')) continue;
      seen++;
      const p = r.Properties;
      if (!(p.SourceAccount !== undefined || (p.SourceArn !== undefined && mentions(p.SourceArn, account))))
        offenders.push(`${stack.stackName} ${id}: ${p.Principal} without SourceAccount or a SourceArn of this account`);
    }
  }
  expect(offenders).toEqual([]);
  // Lambda's roles, CodeDeploy's, API Gateway's CloudWatch role, the alarm topic's policies, the invoke permissions.
  expect(seen).toBeGreaterThan(10);
});

it('names the account stack’s CloudWatch role for API Gateway among them', () => {
  const account = stacks.find((s) => s.key === ACCOUNT)!;
  const roles = Object.values(account.resources).filter((r: any) => r.Type === 'AWS::IAM::Role');
  const trust = roles.flatMap((r: any) => r.Properties.AssumeRolePolicyDocument.Statement);
  expect(trust).toEqual([
    expect.objectContaining({
      Principal: { Service: 'apigateway.amazonaws.com' },
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
    }),
  ]);
});
