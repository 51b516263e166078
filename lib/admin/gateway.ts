/**
 * The API Gateway side of key administration (the usage-plan backstop): the control-plane port, its AWS
 * implementation, and the no-op used for `--local` (the local gateway has no usage plans).
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { usagePlanThrottle, type PlanLimits } from '../../contract/plans.ts';

export interface KeyGateway {
  /**
   * Creates an enabled API key with the given value: usageIdentifierKey(keyId), which the authorizer returns; never
   * the client's secret (API key values are readable with apigateway:GET).
   */
  createKey(name: string, value: string): Promise<string>;
  deleteKey(apiKeyId: string): Promise<void>;
  attach(apiKeyId: string, usagePlanId: string): Promise<void>;
  detach(apiKeyId: string, usagePlanId: string): Promise<void>;
  /** A per-customer usage plan (Enterprise) on the stage. */
  createPlan(name: string, limits: PlanLimits): Promise<string>;
  deletePlan(usagePlanId: string): Promise<void>;
}

export const noGateway: KeyGateway = {
  createKey: async () => '',
  deleteKey: async () => undefined,
  attach: async () => undefined,
  detach: async () => undefined,
  createPlan: async () => '',
  deletePlan: async () => undefined,
};

export function awsKeyGateway(client: APIGatewayClient, api: { apiId: string; stage: string }): KeyGateway {
  return {
    async createKey(name, value) {
      const out = await client.send(new CreateApiKeyCommand({ name, value, enabled: true }));
      return out.id!;
    },
    async deleteKey(apiKeyId) {
      await client.send(new DeleteApiKeyCommand({ apiKey: apiKeyId }));
    },
    async attach(apiKeyId, usagePlanId) {
      await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId, keyType: 'API_KEY' }));
    },
    async detach(apiKeyId, usagePlanId) {
      await client.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId: apiKeyId }));
    },
    async createPlan(name, limits) {
      const t = usagePlanThrottle(limits);
      const out = await client.send(
        new CreateUsagePlanCommand({
          name,
          apiStages: [{ apiId: api.apiId, stage: api.stage }],
          throttle: { rateLimit: t.rateLimit, burstLimit: t.burstLimit },
          quota: { limit: t.quotaPerDay, period: 'DAY' },
        }),
      );
      return out.id!;
    },
    async deletePlan(usagePlanId) {
      // A usage plan still associated with a stage cannot be deleted.
      await client.send(
        new UpdateUsagePlanCommand({
          usagePlanId,
          patchOperations: [{ op: 'remove', path: '/apiStages', value: `${api.apiId}:${api.stage}` }],
        }),
      );
      await client.send(new DeleteUsagePlanCommand({ usagePlanId }));
    },
  };
}
