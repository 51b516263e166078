/**
 * Preflight's account-quotas check (lib/preflight/account-quotas.ts) on the synthesized staging template: a
 * reservation the account cannot give fails the deploy mid-update, so preflight says so first, with the quota to ask
 * for and the `-c` value that sizes the stage for the account as it is; a stage sized beyond the account's quota or
 * API throttle is named too. Readings are stand-ins for Lambda's GetAccountSettings and API Gateway's GetAccount.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCOUNT_QUOTAS, edgeFor } from '../../lib/config/capacity.ts';
import { STAGES } from '../../lib/config/stages.ts';
import {
  ACCOUNT_READ_ACTIONS,
  accountQuotaFindings,
  accountQuotasCheck,
  lambdaConcurrencyFitting,
  reservedIn,
} from '../../lib/preflight/account-quotas.ts';
import type { PreflightInput } from '../../lib/preflight/checks.ts';
import { awsReadFailure } from '../../lib/preflight/read-failure.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { localAssembly } from '../../lib/local/synth.ts';

let template: CfnTemplate;
beforeAll(async () => {
  template = (await localAssembly()).template as CfnTemplate;
}, 240_000);

const declared = DEFAULT_ACCOUNT_QUOTAS;

describe('the account quotas a deploy needs', () => {
  it('reads the reservation from the template: the authorizer’s, sized from the stage’s quotas', () => {
    expect(reservedIn(template)).toBe(STAGES.staging.authorizerReservedConcurrency);
    expect(reservedIn(template)).toBe(edgeFor(declared).authorizerReservedConcurrency);
  });

  it('passes a first stage in an account at the default quota', () => {
    const readings = { lambdaLimit: 1_000, lambdaUnreserved: 1_000, api: { rateLimit: 10_000, burstLimit: 5_000 } };
    expect(accountQuotaFindings({ stage: 'staging', declared, template, readings })).toEqual([]);
  });

  it('passes an update that moves its own reservation (the one it replaces is freed)', () => {
    const readings = { lambdaLimit: 1_000, lambdaUnreserved: 500, api: { rateLimit: 10_000, burstLimit: 5_000 } };
    expect(
      accountQuotaFindings({ stage: 'staging', declared, template, deployedTemplate: template, readings }),
    ).toEqual([]);
  });

  it('names the quota and the -c value when a second stage would leave Lambda fewer than 100 unreserved', () => {
    // Production already reserves 500 of the default 1,000.
    const readings = { lambdaLimit: 1_000, lambdaUnreserved: 500 };
    const findings = accountQuotaFindings({ stage: 'staging', declared, template, readings });
    expect(findings).toHaveLength(1);
    const fit = lambdaConcurrencyFitting(declared, 400);
    expect(edgeFor({ ...declared, lambdaConcurrency: fit }).authorizerReservedConcurrency).toBeLessThanOrEqual(400);
    expect(edgeFor({ ...declared, lambdaConcurrency: fit + 1 }).authorizerReservedConcurrency).toBeGreaterThan(400);
    expect(findings[0]).toContain('the deploy would fail');
    // What production holds, this stage's reservation (sized from its routes), and the 100 Lambda keeps unreserved.
    const needed = readings.lambdaLimit - readings.lambdaUnreserved + reservedIn(template) + 100;
    expect(findings[0]).toContain(`"Concurrent executions" of at least ${needed.toLocaleString('en-US')}`);
    expect(findings[0]).toContain(`-c animal-store:staging:lambdaConcurrency=${fit}`);
  });

  it('names a stage sized beyond the account’s Lambda quota or API throttle', () => {
    const big = { ...declared, lambdaConcurrency: 10_000, apiRate: 20_000, apiBurst: 5_000 };
    const findings = accountQuotaFindings({
      stage: 'production',
      declared: big,
      template: { Resources: {} },
      readings: { lambdaLimit: 3_000, lambdaUnreserved: 3_000, api: { rateLimit: 10_000, burstLimit: 5_000 } },
    });
    expect(findings).toEqual([
      expect.stringContaining('-c animal-store:production:lambdaConcurrency=3000'),
      expect.stringContaining('-c animal-store:production:apiRate=10000 -c animal-store:production:apiBurst=5000'),
    ]);
  });

  it('as a preflight check: skipped with a note without credentials, the -c context applied otherwise', async () => {
    const notes: string[] = [];
    const input = (context: Record<string, string>) =>
      ({
        stage: 'staging',
        name: 'staging',
        template,
        context,
        deployed: async () => ({ state: 'absent' }),
        note: (l: string) => notes.push(l),
      }) as unknown as PreflightInput;
    expect(await accountQuotasCheck(async () => ({ skip: 'no AWS credentials' })).run(input({}))).toEqual([]);
    expect(notes).toEqual(['account quotas: no AWS credentials: skipped']);
    const small = accountQuotasCheck(async () => ({ lambdaLimit: 500, lambdaUnreserved: 500 }));
    expect(await small.run(input({}))).toEqual([expect.stringContaining('the deploy would fail')]);
    // A quota the account has but the stage was not sized for: named with the -c value.
    const lower = accountQuotasCheck(async () => ({ lambdaLimit: 800, lambdaUnreserved: 800 }));
    expect(await lower.run(input({}))).toEqual([
      expect.stringContaining('-c animal-store:staging:lambdaConcurrency=800'),
    ]);
    // A read refused: the finding names what preflight's credentials need.
    const denied = Object.assign(new Error('User is not authorized to perform: lambda:GetAccountSettings'), {
      name: 'AccessDeniedException',
    });
    const refused = accountQuotasCheck(async () => ({
      finding: awsReadFailure('account quotas', "the account's quotas", ACCOUNT_READ_ACTIONS, denied),
    }));
    expect(await refused.run(input({}))).toEqual([
      expect.stringMatching(
        /^account quotas: could not read .*need lambda:GetAccountSettings, apigateway:GET on \/account/,
      ),
    ]);
    // The account stack reserves nothing: nothing to check.
    expect(await small.run({ ...input({}), name: 'account' } as PreflightInput)).toEqual([]);
  });

  it('words a failed read by what fixes it: credentials AWS refused, a permission missing, anything else', () => {
    const failed = (name: string) =>
      awsReadFailure('account quotas', 'x', ACCOUNT_READ_ACTIONS, { name, message: 'm' });
    expect(failed('ExpiredTokenException')).toMatch(/AWS refused preflight's credentials; renew them/);
    expect(failed('AccessDeniedException')).toMatch(/credentials need lambda:GetAccountSettings/);
    expect(failed('ThrottlingException')).toMatch(/run preflight again \(the check only reads\)$/);
  });
});
