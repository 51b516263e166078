/**
 * Preflight's check that every Enterprise bracket in use on the stage has its whole pool at the gateway: the
 * bracket's usage plan with each of its members on it, the probation member included (contract/probation.ts). API
 * Gateway answers 403 for a usageIdentifierKey on no usage plan, so a mapped member missing is a 403 for the keys
 * that map to it. The probation member is named by the authorizer only once the admin tool recorded it
 * (lambdas/storage/bracket-probation.ts), so a bracket made by an admin tool older than the probation member (only
 * its 4 mapped members) serves its keys on probation on their ordinary members: no 403, but no probation either,
 * until `keys reconcile --all` makes and records it.
 *
 * What is "in use" and "complete" is exactly what `keys reconcile --all` makes (lib/admin/reconcile-all.ts and
 * reconcile-pool.ts): the brackets of active Enterprise keys already in a pool (a key still on an API key of its own
 * is named by that, and is moved, its bracket made first, by the sweep after the deploy that understands pools:
 * lib/admin/key-layout.ts), each complete when every value of bracketPoolKeys is
 * on the plan bracketPlanName finds. So the command the finding names always makes it pass. A pool no active key
 * is in is left alone by that sweep and named by no authorizer, so it is not a finding either. Reads only: the
 * keys table's listing (Query), API Gateway's GetUsagePlans and GetUsagePlanKeys, each paged through to the end.
 */
import { BRACKET_POOL } from '../../contract/key-pool.ts';
import type { PlanLimits } from '../../contract/plans.ts';
import { limitsOf } from '../../lambdas/domain/keys.ts';
import { bracketPlanName, bracketPoolKeys, enterpriseBracket } from '../admin/brackets.ts';
import type { KeyGateway } from '../admin/gateway.ts';
import type { KeyAdminStorePort } from '../admin/ports.ts';

/** What the check reads: the admin tool's own store and gateway adapters for the stage, read calls only. */
export interface BracketReads {
  readonly stage: string;
  readonly store: Pick<KeyAdminStorePort, 'listPage'>;
  readonly gateway: Pick<KeyGateway, 'findPlan' | 'planKeyValues'>;
  /** Keys per page of the listing. @default 100 (as the sweep) */
  readonly pageSize?: number;
}

export interface IncompleteBracket {
  readonly id: string;
  /** The pool members not on the bracket's plan, by number (all of them when the plan itself is missing). */
  readonly missing: readonly number[];
  readonly planMissing: boolean;
}

/** A read that failed: which one, and AWS's answer. */
export class BracketReadError extends Error {
  readonly what: string;
  readonly cause: unknown;
  constructor(what: string, cause: unknown) {
    super(`could not read ${what}`);
    this.what = what;
    this.cause = cause;
  }
}

async function reading<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new BracketReadError(what, err);
  }
}

/** The brackets of the stage's active Enterprise keys, by id (one key's limits each: they share the figures). */
async function bracketsInUse(reads: BracketReads): Promise<Map<string, PlanLimits>> {
  const inUse = new Map<string, PlanLimits>();
  let after: string | undefined;
  do {
    const page = await reading("the stage's Enterprise keys (the keys table's listing)", () =>
      reads.store.listPage({ plan: 'enterprise', status: 'active' }, reads.pageSize ?? 100, after),
    );
    for (const r of page.records) {
      const limits = limitsOf(r);
      // A key still on an API key (or usage plan) of its own from before pools is named by that key, not by a
      // bracket's member, until the sweep after the deploy moves it (that sweep makes its bracket's pool first).
      if (!limits || r.apiGatewayKeyId || r.usagePlanId) continue;
      const id = enterpriseBracket(limits).id;
      if (!inUse.has(id)) inUse.set(id, limits);
    }
    after = page.next;
  } while (after);
  return inUse;
}

/** Each bracket in use whose pool at the gateway is not complete, and how many brackets are in use. */
export async function incompleteBrackets(
  reads: BracketReads,
): Promise<{ inUse: number; incomplete: IncompleteBracket[] }> {
  const { stage, gateway } = reads;
  const inUse = await bracketsInUse(reads);
  const incomplete: IncompleteBracket[] = [];
  for (const [id, limits] of inUse) {
    const name = bracketPlanName(stage, enterpriseBracket(limits));
    const members = bracketPoolKeys(stage, limits);
    const planId = await reading(`API Gateway's usage plans (${name})`, () => gateway.findPlan(name));
    if (!planId) {
      incomplete.push({ id, missing: members.map((_, m) => m), planMissing: true });
      continue;
    }
    const on = new Set(await reading(`the keys of usage plan ${name}`, () => gateway.planKeyValues(planId)));
    const missing = members.flatMap((member, m) => (on.has(member.value) ? [] : [m]));
    if (missing.length) incomplete.push({ id, missing, planMissing: false });
  }
  return { inUse: inUse.size, incomplete };
}

/** The admin tool's command that completes every bracket in use (README, "Key administration"). */
export const reconcileAllCommand = (stage: string): string => `npm run admin -- keys reconcile --all --stage ${stage}`;

/** Brackets named in a finding; the rest are counted. */
const NAMED = 3;

function describeBracket(b: IncompleteBracket): string {
  if (b.planMissing) return `${b.id}: no usage plan`;
  // The probation member is the one after those key ids map to (contract/probation.ts).
  const what = b.missing.map((m) => (m === BRACKET_POOL.members ? `probation member m${m}` : `member m${m}`));
  return `${b.id}: ${what.join(', ')} not on its usage plan`;
}

/** The finding for the incomplete brackets (none: no finding). */
export function incompleteFinding(stage: string, inUse: number, incomplete: readonly IncompleteBracket[]): string[] {
  if (!incomplete.length) return [];
  const named = incomplete.slice(0, NAMED).map(describeBracket);
  const more = incomplete.length > NAMED ? `; and ${incomplete.length - NAMED} more` : '';
  // A mapped member missing refuses its keys; a probation member missing only leaves probation unenforced.
  const refused = incomplete.some((b) => b.planMissing || b.missing.some((m) => m !== BRACKET_POOL.members));
  const effect = refused
    ? 'and API Gateway answers 403 for a key named on no usage plan'
    : 'so their keys on probation are counted on their ordinary members (no probation) until it is made';
  return [
    `Enterprise bracket pools: ${incomplete.length} of ${inUse} bracket(s) in use on ${stage} lack pool members ` +
      `(${named.join('; ')}${more}), ${effect}: ` +
      `run ${reconcileAllCommand(stage)}, then preflight again (docs/deployment.md, "An Enterprise bracket's probation member")`,
  ];
}

/** The IAM actions the check's reads need, for the finding when the credentials lack one. */
export const BRACKET_READ_ACTIONS =
  'cloudformation:DescribeStacks on the stack, dynamodb:Query on the keys table and its indexes, apigateway:GET on /usageplans and /usageplans/*/keys';

const isAccessDenied = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return /AccessDenied|Unauthorized|Forbidden/i.test(e?.name ?? '') || e?.$metadata?.httpStatusCode === 403;
};

/** AWS's answer in one line. */
const oneLine = (err: unknown): string => {
  const e = err as Error;
  return `${e?.name ?? 'Error'}: ${String(e?.message ?? err).split('\n')[0]}`;
};

/** Credentials AWS did not accept at all (expired, unknown, badly signed): no permission would help. */
const isRejectedCredentials = (err: unknown): boolean =>
  /ExpiredToken|UnrecognizedClient|InvalidClientTokenId|SignatureDoesNotMatch/.test((err as Error)?.name ?? '');

/**
 * The finding for a read that failed: a missing permission names the actions, credentials AWS refused say so, and
 * anything else (a fault, a throttle past the retries) says to run it again.
 */
export function readFailureFinding(what: string, err: unknown): string {
  return awsReadFailure('Enterprise bracket pools', what, BRACKET_READ_ACTIONS, err);
}

/** A preflight check's read that failed, in the same words whichever check it is (`actions`: what it needs). */
export function awsReadFailure(check: string, what: string, actions: string, err: unknown): string {
  const head = `${check}: could not read ${what} (${oneLine(err)})`;
  if (isRejectedCredentials(err))
    return `${head}: AWS refused preflight's credentials; renew them and run preflight again`;
  return isAccessDenied(err)
    ? `${head}: preflight's credentials need ${actions}; grant them and run preflight again`
    : `${head}: run preflight again (the check only reads)`;
}

/** The check's findings on one stage: none when every bracket in use is complete, or none is in use. */
export async function bracketPoolFindings(reads: BracketReads): Promise<string[]> {
  try {
    const { inUse, incomplete } = await incompleteBrackets(reads);
    return incompleteFinding(reads.stage, inUse, incomplete);
  } catch (err) {
    if (err instanceof BracketReadError) return [readFailureFinding(err.what, err.cause)];
    throw err;
  }
}
