/**
 * The API Gateway side of key administration (the usage-plan backstop): the control-plane port, its AWS
 * implementation, and the no-op used for `--local` (the local gateway has no usage plans).
 *
 * Every call keeps to AWS's documented control-plane rates (pacing.ts), and every step is idempotent, so a command
 * that stopped part-way (throttled past its retries, a lost answer, the admin's laptop closing) is finished by
 * running it again: a step that finds its work done moves on. An API key or usage plan already deleted is deleted;
 * a key already on its plan is attached; a create whose answer was lost is found again by its name.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlanKeyCommand,
  GetUsagePlanKeysCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import type { UsagePlanLimits } from '../../contract/plans.ts';
import { pacedSender, realClock, type PacingClock, type PacingOptions, type Sender } from './pacing.ts';

export interface KeyGateway {
  /**
   * Creates an enabled API key with the given value: usageIdentifierKey(keyId), which the authorizer returns; never
   * the client's secret (API key values are readable with apigateway:GET).
   */
  createKey(name: string, value: string): Promise<string>;
  deleteKey(apiKeyId: string): Promise<void>;
  attach(apiKeyId: string, usagePlanId: string): Promise<void>;
  detach(apiKeyId: string, usagePlanId: string): Promise<void>;
  /** A usage plan on the stage with these figures (an Enterprise bracket's: brackets.ts). */
  createPlan(name: string, plan: UsagePlanLimits): Promise<string>;
  /** The usage plan of that name on the stage, if there is one. */
  findPlan(name: string): Promise<string | undefined>;
  /**
   * A plan's throttle and quota as API Gateway holds them: from the listing findPlan read (GetUsagePlans' items carry
   * them), else one GetUsagePlan. Undefined where a figure is missing (a plan without a throttle or quota).
   */
  planLimits(usagePlanId: string): Promise<Omit<UsagePlanLimits, 'guaranteed'> | undefined>;
  /** Sets a plan's throttle and quota in place (one UpdateUsagePlan, no moment without a plan). */
  updatePlan(usagePlanId: string, plan: UsagePlanLimits): Promise<void>;
  deletePlan(usagePlanId: string): Promise<void>;
  /** The values of the API keys on a usage plan (a bracket's pool members: reconcile.ts). */
  planKeyValues(usagePlanId: string): Promise<string[]>;
}

export const noGateway: KeyGateway = {
  createKey: async () => '',
  deleteKey: async () => undefined,
  attach: async () => undefined,
  detach: async () => undefined,
  createPlan: async () => '',
  findPlan: async () => undefined,
  planLimits: async () => undefined,
  updatePlan: async () => undefined,
  deletePlan: async () => undefined,
  planKeyValues: async () => [],
};

const named = (name: string) => (err: unknown) => (err as Error)?.name === name;
const notFound = named('NotFoundException');

/** Runs a step whose work may already be done: `done(err)` says when an error means exactly that. */
async function once(step: () => Promise<unknown>, done: (err: unknown) => boolean): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (!done(err)) throw err;
  }
}

export function awsKeyGateway(
  client: APIGatewayClient | Sender,
  api: { apiId: string; stage: string },
  clock: PacingClock = realClock,
  pacing: PacingOptions = {},
): KeyGateway {
  const aws = pacedSender(client as Sender, clock, pacing);
  const send = <T>(command: object) => aws.send(command) as Promise<T>;
  const stageName = `${api.apiId}:${api.stage}`;
  /** The figures of the plans findPlan found, from the listing it read: planLimits needs no call of its own. */
  const seenLimits = new Map<string, Omit<UsagePlanLimits, 'guaranteed'> | undefined>();
  const limitsOf = (p: UsagePlan): Omit<UsagePlanLimits, 'guaranteed'> | undefined =>
    p.throttle?.rateLimit !== undefined && p.throttle.burstLimit !== undefined && p.quota?.limit !== undefined
      ? { rateLimit: p.throttle.rateLimit, burstLimit: p.throttle.burstLimit, quotaPerDay: p.quota.limit }
      : undefined;

  /** The API key of that name, if one exists (a create whose answer was lost). */
  async function keyNamed(name: string): Promise<string | undefined> {
    let position: string | undefined;
    do {
      const out = await send<{ items?: Array<{ id?: string; name?: string }>; position?: string }>(
        new GetApiKeysCommand({ nameQuery: name, limit: 500, ...(position ? { position } : {}) }),
      );
      const found = out?.items?.find((k) => k.name === name);
      if (found?.id) return found.id;
      position = out?.position;
    } while (position);
    return undefined;
  }

  /** The usage plan of that name on this stage, if one exists (a create whose answer was lost). */
  async function planNamed(name: string): Promise<string | undefined> {
    let position: string | undefined;
    do {
      const out = await send<{ items?: UsagePlan[]; position?: string }>(
        new GetUsagePlansCommand({ limit: 500, ...(position ? { position } : {}) }),
      );
      const found = out?.items?.find(
        (p) => p.name === name && p.apiStages?.some((s) => `${s.apiId}:${s.stage}` === stageName),
      );
      if (found?.id) {
        seenLimits.set(found.id, limitsOf(found));
        return found.id;
      }
      position = out?.position;
    } while (position);
    return undefined;
  }

  /** A create that, failing, finds out whether it was applied anyway (a lost answer) before it reports failure. */
  async function created(create: () => Promise<string>, find: () => Promise<string | undefined>): Promise<string> {
    try {
      return await create();
    } catch (err) {
      const found = await find().catch(() => undefined);
      if (found) return found;
      throw err;
    }
  }

  return {
    createKey: (name, value) =>
      created(
        async () => (await send<{ id?: string }>(new CreateApiKeyCommand({ name, value, enabled: true }))).id!,
        () => keyNamed(name),
      ),
    deleteKey: (apiKeyId) => once(() => send(new DeleteApiKeyCommand({ apiKey: apiKeyId })), notFound),
    async attach(apiKeyId, usagePlanId) {
      try {
        await send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
      } catch (err) {
        // ConflictException: the key is on that plan already (done), or on another plan of the stage (not done).
        if (!named('ConflictException')(err)) throw err;
        const on = await send(new GetUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId })).then(
          () => true,
          (e: unknown) => (notFound(e) ? false : Promise.reject(e)),
        );
        if (!on) throw err;
      }
    },
    detach: (apiKeyId, usagePlanId) =>
      once(() => send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId })), notFound),
    findPlan: (name) => planNamed(name),
    async planKeyValues(usagePlanId) {
      const values: string[] = [];
      let position: string | undefined;
      do {
        const out = await send<{ items?: Array<{ value?: string }>; position?: string }>(
          new GetUsagePlanKeysCommand({ usagePlanId, limit: 500, ...(position ? { position } : {}) }),
        );
        values.push(...(out?.items ?? []).flatMap((k) => (k.value ? [k.value] : [])));
        position = out?.position;
      } while (position);
      return values;
    },
    createPlan: (name, t) =>
      created(
        async () =>
          (
            await send<{ id?: string }>(
              new CreateUsagePlanCommand({
                name,
                apiStages: [{ apiId: api.apiId, stage: api.stage }],
                throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
                quota: { limit: t.quotaPerDay, period: 'DAY' },
              }),
            )
          ).id!,
        () => planNamed(name),
      ),
    async planLimits(usagePlanId) {
      if (seenLimits.has(usagePlanId)) return seenLimits.get(usagePlanId);
      return limitsOf(await send<UsagePlan>(new GetUsagePlanCommand({ usagePlanId })));
    },
    async updatePlan(usagePlanId, t) {
      await send(
        new UpdateUsagePlanCommand({
          usagePlanId,
          patchOperations: [
            { op: 'replace', path: '/throttle/rateLimit', value: String(t.rateLimit) },
            { op: 'replace', path: '/throttle/burstLimit', value: String(t.burstLimit) },
            { op: 'replace', path: '/quota/limit', value: String(t.quotaPerDay) },
          ],
        }),
      );
    },
    async deletePlan(usagePlanId) {
      let plan: UsagePlan;
      try {
        plan = await send<UsagePlan>(new GetUsagePlanCommand({ usagePlanId }));
      } catch (err) {
        if (notFound(err)) return;
        throw err;
      }
      // A usage plan still associated with a stage cannot be deleted; the association is the 20-second call, so it
      // is made only when the plan still has it.
      if (plan?.apiStages?.some((s) => `${s.apiId}:${s.stage}` === stageName))
        await once(
          () =>
            send(
              new UpdateUsagePlanCommand({
                usagePlanId,
                patchOperations: [{ op: 'remove', path: '/apiStages', value: stageName }],
              }),
            ),
          notFound,
        );
      await once(() => send(new DeleteUsagePlanCommand({ usagePlanId })), notFound);
    },
  };
}
