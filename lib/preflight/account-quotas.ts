/**
 * Preflight's check of the account quotas the stage is sized for (lib/config/capacity.ts) against the account the
 * deploy goes to. The authorizer's reservation is sized from the stage's declared Lambda concurrency (500 at the
 * default 1,000); Lambda refuses a reservation that leaves fewer than 100 executions unreserved, so a second stage in
 * the same account at the default quota, or an account with a lower one, would fail the deploy mid-update. And a
 * stage sized for more executions or a higher API throttle than the account has would meet Lambda's throttles (5xx)
 * or the account's 429s inside what the model promises. Each finding names the quota to ask for and the `-c` value
 * that sizes the stage for what the account gives. Reads only (Lambda GetAccountSettings, API Gateway GetAccount);
 * without AWS credentials it is skipped with a note, as the deployed-stack check is.
 */
import { DEFAULT_ACCOUNT_QUOTAS, edgeFor, UNRESERVED_MINIMUM, type AccountQuotas } from '../config/capacity.ts';
import { STAGES, withAccountQuotas, type StageName } from '../config/stages.ts';
import type { PreflightCheck } from './checks.ts';
import { awsReadFailure } from './read-failure.ts';
import type { CfnTemplate } from './template.ts';

/** What the account has, as Lambda and API Gateway report it. */
export interface AccountReadings {
  /** Lambda's concurrent executions quota of the account and Region. */
  readonly lambdaLimit: number;
  /** Executions no function reserves (the quota less every reservation, this stack's included). */
  readonly lambdaUnreserved: number;
  /** API Gateway's account throttle, where it could be read. */
  readonly api?: { readonly rateLimit: number; readonly burstLimit: number };
}

/** The readings, or why there are none (a note), or a read that failed (a finding). */
export type AccountReadingsSource = () => Promise<
  AccountReadings | { readonly skip: string } | { readonly finding: string }
>;

/** The IAM actions the check's reads need, for the finding when the credentials lack one. */
export const ACCOUNT_READ_ACTIONS = 'lambda:GetAccountSettings, apigateway:GET on /account';

/** Executions reserved by a template's functions (ReservedConcurrentExecutions). */
export function reservedIn(template: CfnTemplate | undefined): number {
  return Object.values(template?.Resources ?? {})
    .filter((r) => r.Type === 'AWS::Lambda::Function')
    .reduce((n, r) => {
      const v = (r.Properties as { ReservedConcurrentExecutions?: unknown } | undefined)?.ReservedConcurrentExecutions;
      return n + (typeof v === 'number' ? v : 0);
    }, 0);
}

/** The largest Lambda concurrency to size the stage for whose reservation fits `room` executions (0: none fits). */
export function lambdaConcurrencyFitting(declared: AccountQuotas, room: number): number {
  let lo = 0;
  let hi = declared.lambdaConcurrency;
  const fits = (q: number) => edgeFor({ ...declared, lambdaConcurrency: q }).authorizerReservedConcurrency <= room;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const n = (x: number) => x.toLocaleString('en-US');

/** One line per quota the account lacks for the stage's template. */
export function accountQuotaFindings(opts: {
  readonly stage: string;
  readonly declared: AccountQuotas;
  readonly template: CfnTemplate;
  /** The stack as deployed now, if any: its reservations are freed by the update that replaces them. */
  readonly deployedTemplate?: CfnTemplate;
  readonly readings: AccountReadings;
}): string[] {
  const { stage, declared, readings } = opts;
  const findings: string[] = [];
  const reserving = reservedIn(opts.template);
  const reservedNow = reservedIn(opts.deployedTemplate);
  const room = readings.lambdaUnreserved + reservedNow - UNRESERVED_MINIMUM;
  if (reserving > room) {
    const fit = lambdaConcurrencyFitting(declared, room);
    findings.push(
      `Lambda: the stack reserves ${n(reserving)} executions for its authorizer (sized for lambdaConcurrency=` +
        `${n(declared.lambdaConcurrency)}), but the account has ${n(readings.lambdaUnreserved)} unreserved of ` +
        `${n(readings.lambdaLimit)} (${n(reservedNow)} of them this stack's now) and Lambda keeps ` +
        `${UNRESERVED_MINIMUM} unreserved: the deploy would fail. Ask Service Quotas for Lambda "Concurrent ` +
        `executions" of at least ${n(readings.lambdaLimit + reserving - room)}, or size the stage for this account: ` +
        (fit > 0 ? `-c animal-store:${stage}:lambdaConcurrency=${fit}` : `(no size fits: raise the quota)`),
    );
  } else if (declared.lambdaConcurrency > readings.lambdaLimit)
    findings.push(
      `Lambda: the stage is sized for ${n(declared.lambdaConcurrency)} concurrent executions, the account's quota is ` +
        `${n(readings.lambdaLimit)}: a burst the stage admits would meet Lambda's throttle (5xx). Deploy with ` +
        `-c animal-store:${stage}:lambdaConcurrency=${readings.lambdaLimit}, or ask for the quota first`,
    );
  if (readings.api && readings.api.rateLimit < declared.apiRate)
    findings.push(
      `API Gateway: the stage is sized for an account throttle of ${n(declared.apiRate)} req/s, the account has ` +
        `${n(readings.api.rateLimit)} (bucket ${n(readings.api.burstLimit)}): deploy with ` +
        `-c animal-store:${stage}:apiRate=${readings.api.rateLimit} -c animal-store:${stage}:apiBurst=` +
        `${readings.api.burstLimit}, or ask Service Quotas for the throttle first`,
    );
  return findings;
}

/** The readings with this machine's credentials. */
export const awsAccountReadings: AccountReadingsSource = async () => {
  const { machineCredentialsProblem } = await import('./deployed.ts');
  const why = await machineCredentialsProblem();
  if (why) return { skip: why };
  const { LambdaClient, GetAccountSettingsCommand } = await import('@aws-sdk/client-lambda');
  const { APIGatewayClient, GetAccountCommand } = await import('@aws-sdk/client-api-gateway');
  const lambda = new LambdaClient({});
  const apigw = new APIGatewayClient({});
  try {
    const settings = await lambda.send(new GetAccountSettingsCommand({}));
    const account = await apigw.send(new GetAccountCommand({}));

    const t = account.throttleSettings;
    return {
      lambdaLimit: settings.AccountLimit?.ConcurrentExecutions ?? DEFAULT_ACCOUNT_QUOTAS.lambdaConcurrency,
      lambdaUnreserved:
        settings.AccountLimit?.UnreservedConcurrentExecutions ?? DEFAULT_ACCOUNT_QUOTAS.lambdaConcurrency,
      ...(t?.rateLimit !== undefined && t.burstLimit !== undefined
        ? { api: { rateLimit: t.rateLimit, burstLimit: t.burstLimit } }
        : {}),
    };
  } catch (err) {
    return { finding: awsReadFailure('account quotas', "the account's quotas", ACCOUNT_READ_ACTIONS, err) };
  } finally {
    lambda.destroy();
    apigw.destroy();
  }
};

/** The check; `source` is a stand-in in tests. Only the stage's own stack reserves executions. */
export function accountQuotasCheck(source: AccountReadingsSource = awsAccountReadings): PreflightCheck {
  return {
    name: 'account quotas',
    run: async (input) => {
      if (input.name !== input.stage) return [];
      const readings = await source();
      if ('skip' in readings) {
        input.note(`account quotas: ${readings.skip}: skipped`);
        return [];
      }
      if ('finding' in readings) return [readings.finding];
      const stage = input.stage as StageName;
      const declared = withAccountQuotas(STAGES[stage], (k) => input.context[k]).accountQuotas;
      const deployed = await input.deployed();
      return accountQuotaFindings({
        stage,
        declared,
        template: input.template,
        deployedTemplate: deployed.state === 'present' ? deployed.template : undefined,
        readings,
      });
    },
  };
}
