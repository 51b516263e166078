/**
 * `keys remove-release-api-keys --stage <stage>`: the admin tool's one writer to API Gateway. It deletes what
 * release 3357b0c's tool and stack made and no later release names (docs/deployment.md, "Upgrading from 3357b0c"):
 * - every API key on the stage's usage plans that is not one of the stack's plan keys;
 * - every usage plan of the stage that is not the stack's, and one named for the stage (`animal-store-<stage>-…`,
 *   `<stack>-…`) left off every stage by a run stopped between its two calls.
 * It refuses unless the stack is settled (`_COMPLETE`) and its template has the plan keys and no
 * `UsagePlanFreePool`: neither this release nor a rollback then names what it deletes. It waits the authorizer
 * cache TTL after the stack's last change. A key or plan shared with another stage only leaves this stage.
 * Each call keeps to REMOVAL_CALL_MS (pacing.ts) to leave the account's control-plane allowance to others. Each
 * step finds its work done, so a stopped run is finished by running it again.
 */
import { PLAN_NAMES } from '../../contract/plans.ts';
import { planKeyIds } from '../preflight/follow.ts';
import type { CfnTemplate } from '../preflight/template.ts';
import type { AdminContext } from './context.ts';
import { pacedSender, type PacingClock, type PacingOptions, type Sender } from './pacing.ts';
import { AdminError, describeError } from './ports.ts';

/** The command, as its failures name it. */
export const REMOVE_RELEASE_API_KEYS = 'keys remove-release-api-keys';

/** At most 2 calls a second: a fifth of the account's 10 for every control-plane call, whatever the operation's own. */
export const REMOVAL_CALL_MS = 500;

/** The logical id of release 3357b0c's Free pool, which the release that stops naming per-key API keys drops. */
export const RELEASE_FREE_POOL = 'UsagePlanFreePool';

/** The IAM actions the command needs, as its help says them (no other admin command calls API Gateway). */
export const REMOVAL_PERMISSIONS =
  'cloudformation:DescribeStacks, GetTemplate and ListStackResources on the stage stack; apigateway:GET on ' +
  '/usageplans and /usageplans/*/keys; apigateway:DELETE on /apikeys/*, /usageplans/* and /usageplans/*/keys/*; ' +
  'apigateway:PATCH on /usageplans/*';

/** A stack as CloudFormation has it deployed. */
export interface DeployedStack {
  readonly name: string;
  readonly status: string;
  /** Its template as deployed (GetTemplate), parsed. */
  readonly template: { readonly Resources?: Readonly<Record<string, { Type?: string; Properties?: any }>> };
  readonly resources: ReadonlyArray<{
    readonly logicalId: string;
    readonly type: string;
    readonly physicalId?: string;
  }>;
  /** When its last resource changed (ms): a deploy's traffic has all shifted by then. */
  readonly changedAt: number;
}

/** The stage's stack and API Gateway's control plane (already paced: pacedControlPlane). */
export interface ControlPlane {
  stack(): Promise<DeployedStack>;
  readonly gateway: Sender;
  /** The stage's authorizer cache TTL (ms): how long API Gateway may replay an answer naming an API key. */
  readonly cacheTtlMs: number;
}

/** A client at the command's pace. */
export const pacedControlPlane = (client: Sender, clock?: PacingClock, options: PacingOptions = {}): Sender =>
  pacedSender(client, clock, { ...options, everyMs: REMOVAL_CALL_MS });

export interface Removed {
  readonly stage: string;
  readonly stack: string;
  /** What this run deleted, and took off this stage only (an API key another stage's plan still holds). */
  readonly deletedApiKeys: readonly string[];
  readonly detachedApiKeys: readonly string[];
  readonly deletedUsagePlans: readonly string[];
  /** Usage plans that serve another stage too: this stage was taken off them, and they stay. */
  readonly leftUsagePlans: readonly string[];
}

interface Plan {
  readonly id: string;
  readonly name: string;
  readonly stages: readonly string[];
}

type Step = { readonly what: string; readonly run: () => Promise<void>; readonly done: (r: Tally) => void };
type Tally = { -readonly [K in keyof Omit<Removed, 'stage' | 'stack'>]: string[] };

/** The one line a failure before anything was deleted says. */
const again = (why: string) => new AdminError(`${why}: run \`${REMOVE_RELEASE_API_KEYS}\` again`);

/** Why the stack is not one this command may delete from, with what to do; undefined when it is. */
function refusal(stack: DeployedStack, stage: string): string | undefined {
  const deploy = `deploy this release to ${stage} (docs/deployment.md, "Upgrading from 3357b0c"), then run \`${REMOVE_RELEASE_API_KEYS}\``;
  // A rolled-back update leaves the template it started from: settled, and judged by that template like any other.
  if (
    !/_COMPLETE$/.test(stack.status) ||
    (/ROLLBACK|DELETE/.test(stack.status) && stack.status !== 'UPDATE_ROLLBACK_COMPLETE')
  )
    return `stack ${stack.name} is ${stack.status}, not settled: a deploy or rollback may still bring back a release that names what this deletes; wait for a *_COMPLETE status, then run \`${REMOVE_RELEASE_API_KEYS}\``;
  const resources = stack.template.Resources ?? {};
  const keys = planKeyIds({ Resources: resources as CfnTemplate['Resources'] }, stage);
  const missing = PLAN_NAMES.filter((p) => !keys.has(p));
  if (missing.length)
    return `stack ${stack.name} has no API key of plan ${missing.join(', ')} in its deployed template: it runs a release that may name what this deletes; ${deploy}`;
  if (RELEASE_FREE_POOL in resources)
    return `stack ${stack.name} still has release 3357b0c's ${RELEASE_FREE_POOL}: a rollback there would name what this deletes; ${deploy}`;
  return undefined;
}

const notFound = (err: unknown) => (err as Error)?.name === 'NotFoundException';

/** Runs a step whose work may already be done: NotFoundException means exactly that. */
async function idempotent(send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (err) {
    if (!notFound(err)) throw err;
  }
}

export async function removeReleaseApiKeys(ctx: AdminContext, progress: (line: string) => void): Promise<Removed> {
  const { stage } = ctx.deps;
  if (!ctx.deps.controlPlane)
    throw new AdminError(`${REMOVE_RELEASE_API_KEYS} works on a stage's API Gateway, which --local has none of`);
  const cp = await ctx.deps.controlPlane();
  const stack = await cp.stack().catch((err: unknown) => {
    throw again(`nothing was removed: the stage's stack could not be read (${describeError(err)})`);
  });
  const refused = refusal(stack, stage);
  if (refused) throw new AdminError(refused);
  const quiet = stack.changedAt + cp.cacheTtlMs;
  if (ctx.now() < quiet)
    throw new AdminError(
      `stack ${stack.name} changed at ${new Date(stack.changedAt).toISOString()}: an authorizer answer cached before ` +
        `then may name what this deletes until ${new Date(quiet).toISOString()}; run \`${REMOVE_RELEASE_API_KEYS}\` ` +
        'again from then',
    );
  const physical = (type: string) => stack.resources.filter((r) => r.type === type && r.physicalId);
  const api = physical('AWS::ApiGateway::RestApi')[0]?.physicalId;
  const stageName = physical('AWS::ApiGateway::Stage')[0]?.physicalId;
  if (!api || !stageName) throw new AdminError(`stack ${stack.name} has no REST API stage: nothing of it to remove`);
  const ours = `${api}:${stageName}`;
  const stackKeys = new Set(physical('AWS::ApiGateway::ApiKey').map((r) => r.physicalId!));
  const stackPlans = new Set(physical('AWS::ApiGateway::UsagePlan').map((r) => r.physicalId!));

  const sdk = await import('@aws-sdk/client-api-gateway');
  const send = <T>(command: object) => cp.gateway.send(command) as Promise<T>;
  const pages = async <T>(read: (position?: string) => object): Promise<T[]> => {
    const all: T[] = [];
    let position: string | undefined;
    do {
      const out = await send<{ items?: T[]; position?: string }>(read(position));
      all.push(...(out?.items ?? []));
      position = out?.position;
    } while (position);
    return all;
  };
  const steps: Step[] = [];
  let kept = 0;
  try {
    const plans: Plan[] = (
      await pages<{ id?: string; name?: string; apiStages?: Array<{ apiId?: string; stage?: string }> }>(
        (position) => new sdk.GetUsagePlansCommand({ limit: 500, ...(position ? { position } : {}) }),
      )
    ).map((p) => ({
      id: p.id!,
      name: p.name ?? '',
      stages: (p.apiStages ?? []).map((s) => `${s.apiId}:${s.stage}`),
    }));
    const keysOf = new Map<string, Array<{ id: string; name: string }>>();
    for (const p of plans.filter((p) => p.stages.length))
      keysOf.set(
        p.id,
        (
          await pages<{ id?: string; name?: string }>(
            (position) =>
              new sdk.GetUsagePlanKeysCommand({ usagePlanId: p.id, limit: 500, ...(position ? { position } : {}) }),
          )
        ).map((k) => ({ id: k.id!, name: k.name ?? '' })),
      );
    const onStage = plans.filter((p) => p.stages.includes(ours));
    // Keys another stage's plan holds: that stage names them, so they are only taken off this one's plans.
    const elsewhere = new Set(
      plans.filter((p) => !p.stages.includes(ours)).flatMap((p) => (keysOf.get(p.id) ?? []).map((k) => k.id)),
    );
    const planned = new Map<string, { name: string; plans: string[] }>();
    for (const p of onStage)
      for (const k of keysOf.get(p.id) ?? []) {
        if (stackKeys.has(k.id)) continue;
        const entry = planned.get(k.id) ?? { name: k.name, plans: [] };
        entry.plans.push(p.id);
        planned.set(k.id, entry);
      }
    for (const [id, { name, plans: on }] of [...planned].sort(([a], [b]) => a.localeCompare(b))) {
      const label = `API key ${id}${name ? ` (${name})` : ''}`;
      if (elsewhere.has(id))
        for (const usagePlanId of on)
          steps.push({
            what: `taking ${label} off usage plan ${usagePlanId}`,
            run: () => idempotent(() => send(new sdk.DeleteUsagePlanKeyCommand({ usagePlanId, keyId: id }))),
            done: (t) => t.detachedApiKeys.push(id),
          });
      else
        steps.push({
          what: `deleting ${label}`,
          run: () => idempotent(() => send(new sdk.DeleteApiKeyCommand({ apiKey: id }))),
          done: (t) => t.deletedApiKeys.push(id),
        });
    }
    for (const p of onStage) {
      if (stackPlans.has(p.id)) {
        kept++;
        continue;
      }
      // A plan still on a stage cannot be deleted: off this stage first (UpdateUsagePlan, once per 20 s per account).
      steps.push({
        what: `taking usage plan ${p.id} (${p.name}) off stage ${ours}`,
        run: () =>
          idempotent(() =>
            send(
              new sdk.UpdateUsagePlanCommand({
                usagePlanId: p.id,
                patchOperations: [{ op: 'remove', path: '/apiStages', value: ours }],
              }),
            ),
          ),
        done: (t) => (p.stages.length > 1 ? t.leftUsagePlans.push(p.id) : undefined),
      });
      if (p.stages.length === 1) steps.push(deletePlan(sdk, send, p));
    }
    // Taken off the stage by a run that stopped before deleting it: named for this stage by 3357b0c's tool, or by
    // its stack (the Free pool and spent-day plans it retained), on no stage.
    const prefixes = [`animal-store-${stage}-`, `${stack.name}-`];
    for (const p of plans)
      if (!p.stages.length && prefixes.some((x) => p.name.startsWith(x)) && !stackPlans.has(p.id))
        steps.push(deletePlan(sdk, send, p));
  } catch (err) {
    throw again(`nothing was removed: the stage's usage plans could not be listed (${describeError(err)})`);
  }

  const tally: Tally = { deletedApiKeys: [], detachedApiKeys: [], deletedUsagePlans: [], leftUsagePlans: [] };
  progress(
    steps.length
      ? `${stage}: ${steps.length} step(s) to remove what release 3357b0c made (${kept} usage plan(s) ` +
          `and ${stackKeys.size} API key(s) of stack ${stack.name} stay)`
      : `${stage}: nothing to remove`,
  );
  for (const [i, step] of steps.entries()) {
    try {
      await step.run();
    } catch (err) {
      // Partly done: the next run lists what is left and goes on.
      throw new AdminError(
        `${step.what} failed after ${i} of ${steps.length} step(s) (${describeError(err)}): run ` +
          `\`${REMOVE_RELEASE_API_KEYS}\` again: it lists what is left and goes on`,
      );
    }
    step.done(tally);
    progress(`${step.what}: done (${i + 1}/${steps.length})`);
  }
  return { stage, stack: stack.name, ...tally };
}

function deletePlan(
  sdk: typeof import('@aws-sdk/client-api-gateway'),
  send: (command: object) => Promise<unknown>,
  p: Plan,
): Step {
  return {
    what: `deleting usage plan ${p.id} (${p.name})`,
    run: () => idempotent(() => send(new sdk.DeleteUsagePlanCommand({ usagePlanId: p.id }))),
    done: (t) => t.deletedUsagePlans.push(p.id),
  };
}

/** The stage's stack and API Gateway in `region`, as the command reads and writes them (a stage target). */
export async function awsControlPlane(
  region: string,
  stackName: string,
  cacheTtlMs: number,
  pacing: PacingOptions = {},
): Promise<ControlPlane> {
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  const cfn = await import('@aws-sdk/client-cloudformation');
  const client = new cfn.CloudFormationClient({ region });
  return {
    gateway: pacedControlPlane(new APIGatewayClient({ region }), undefined, pacing),
    cacheTtlMs,
    async stack() {
      const described = await client.send(new cfn.DescribeStacksCommand({ StackName: stackName }));
      const body = await client.send(new cfn.GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }));
      const resources: Array<{ logicalId: string; type: string; physicalId?: string }> = [];
      let changedAt = 0;
      let next: string | undefined;
      do {
        const out = await client.send(
          new cfn.ListStackResourcesCommand({ StackName: stackName, ...(next ? { NextToken: next } : {}) }),
        );
        for (const r of out.StackResourceSummaries ?? []) {
          changedAt = Math.max(changedAt, r.LastUpdatedTimestamp?.getTime() ?? 0);
          resources.push({
            logicalId: r.LogicalResourceId ?? '',
            type: r.ResourceType ?? '',
            ...(r.PhysicalResourceId ? { physicalId: r.PhysicalResourceId } : {}),
          });
        }
        next = out.NextToken;
      } while (next);
      let template: DeployedStack['template'];
      try {
        template = JSON.parse(body.TemplateBody ?? '{}') as DeployedStack['template'];
      } catch {
        throw new AdminError(`stack ${stackName}'s deployed template is not JSON (this app deploys JSON)`);
      }
      const status = described.Stacks?.[0]?.StackStatus ?? 'UNKNOWN';
      return { name: stackName, status, template, resources, changedAt };
    },
  };
}
