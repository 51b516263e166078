/**
 * The admin tool's API Gateway calls against aws-sdk-client-mock (no local engine exists for that control plane):
 * the exact calls (none for a key of a standard plan: every key shares its plan's pool; an Enterprise bracket's pool
 * made once), the move of a key with an API key of its own into its pool, and what the local API's own authorizer
 * function names for each key. Records on DynamoDB Local.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
// The control plane the admin tool drives (lib/admin/gateway.ts), mocked: no local engine exists for it.
import * as apigateway from '@aws-sdk/client-api-gateway';
import { API_KEY_VALUE_PATTERN, usageIdentifierKey } from '../../lambdas/domain/keys.ts';
import { MEMBER_PLAN, usagePlanThrottle } from '../../contract/plans.ts';
import { enterpriseBracket } from '../../lib/admin/brackets.ts';
import { BRACKET_POOL, bracketPoolKeyValue, poolValueOf } from '../../contract/key-pool.ts';
import { AUTHORIZER } from '../../contract/routes.ts';
import { awsKeyGateway } from '../../lib/admin/gateway.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { type TestApi } from '../helpers/api.ts';
import { startLocalAdmin } from '../helpers/admin.ts';

let api: TestApi;
let localDeps: AdminDeps;

beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** The local API's own authorizer function, called directly as API Gateway would. */
function authorize(key: string) {
  const authorizer = [...api.functions.values()].find((f) => f.def.name === AUTHORIZER.name)!;
  return authorizer.handler(
    {
      type: 'TOKEN',
      authorizationToken: `Bearer ${key}`,
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:api123/v1/GET/pets',
    },
    {} as never,
  ) as Promise<{ usageIdentifierKey?: string }>;
}

describe('admin tool against API Gateway (aws-sdk-client-mock)', () => {
  const apigw = mockClient(apigateway.APIGatewayClient);
  const plans = { free: 'plan-free', pro: 'plan-pro', business: 'plan-business' };
  let deps: AdminDeps;

  beforeEach(() => {
    apigw.reset();
    apigw.on(apigateway.CreateApiKeyCommand).resolves({ id: 'apikey-1' });
    apigw.on(apigateway.CreateUsagePlanCommand).resolves({ id: 'plan-acme' });
    deps = {
      ...localDeps,
      stage: 'staging',
      usagePlans: plans,
      gateway: awsKeyGateway(
        new apigateway.APIGatewayClient({
          region: 'us-east-1',
          credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
        }),
        { apiId: 'api123', stage: 'v1' },
      ),
    };
  });

  it("creates keys of the standard plans without any API Gateway call: their plan's pool serves them", async () => {
    const admin = keyAdmin(deps);
    for (const plan of ['free', 'pro', 'business'] as const) {
      const { key, record } = await admin.create({ owner: `pool-${plan}`, plan });
      // The authorizer names the pool member its key id maps to, on the stage, never anything of the secret.
      const named = (await authorize(key)).usageIdentifierKey!;
      expect(named).toBe(poolValueOf(record, 'staging'));
      expect(named).not.toContain(key.slice(5, 15));
      expect(named).toMatch(API_KEY_VALUE_PATTERN);
    }
    expect(apigw.calls(), 'no control-plane call').toHaveLength(0);
  });

  it("puts Enterprise keys in their bracket's pool: its usage plan and members made on first use, found after", async () => {
    const limits = { perMinute: 6000, perDay: 5_000_000 };
    apigw.on(apigateway.GetUsagePlansCommand).resolves({ items: [] });
    apigw.on(apigateway.GetUsagePlanKeysCommand).resolves({ items: [] });
    const { key, record } = await keyAdmin(deps).create({ owner: 'bigco', plan: 'enterprise', ...limits });
    // The bracket's id is the exact mapping's figures rounded up to 1, 3, 10, 30, ...; its plan a pool member's.
    const t = usagePlanThrottle(limits);
    expect(t).toMatchObject({ rateLimit: 200, burstLimit: 5_000, guaranteed: false });
    const b = enterpriseBracket(limits);
    expect(b.id).toMatch(/^r300-b5000-q/);
    expect(b).toMatchObject({ rateLimit: MEMBER_PLAN.rateLimit, burstLimit: MEMBER_PLAN.burstLimit });
    expect(apigw.commandCalls(apigateway.CreateUsagePlanCommand)[0]!.args[0].input).toMatchObject({
      name: `animal-store-staging-enterprise-${b.id}`,
      apiStages: [{ apiId: 'api123', stage: 'v1' }],
      throttle: { rateLimit: b.rateLimit, burstLimit: b.burstLimit },
      quota: { limit: b.quotaPerDay, period: 'DAY' },
    });
    const members = apigw.commandCalls(apigateway.CreateApiKeyCommand).map((c) => c.args[0].input.value);
    expect(members).toEqual(
      Array.from({ length: BRACKET_POOL.apiKeys }, (_, m) => bracketPoolKeyValue('staging', b.id, m)),
    );
    expect(apigw.commandCalls(apigateway.CreateUsagePlanKeyCommand)).toHaveLength(BRACKET_POOL.apiKeys);
    expect((await authorize(key)).usageIdentifierKey).toBe(poolValueOf(record, 'staging'));
    expect(members).toContain(poolValueOf(record, 'staging'));
    // Another run of the tool finds the pool complete: only reads.
    apigw.reset();
    apigw.on(apigateway.GetUsagePlansCommand).resolves({
      items: [
        {
          id: 'plan-acme',
          name: `animal-store-staging-enterprise-${b.id}`,
          apiStages: [{ apiId: 'api123', stage: 'v1' }],
          throttle: { rateLimit: b.rateLimit, burstLimit: b.burstLimit },
          quota: { limit: b.quotaPerDay, period: 'DAY' },
        },
      ],
    });
    apigw
      .on(apigateway.GetUsagePlanKeysCommand)
      .resolves({ items: members.map((value, i) => ({ id: `k${i}`, value })) });
    await keyAdmin(deps).create({ owner: 'bigco', plan: 'enterprise', ...limits });
    expect(apigw.calls().map((c) => c.args[0].constructor.name)).toEqual([
      'GetUsagePlansCommand',
      'GetUsagePlanKeysCommand',
    ]);
  });

  it("gives a bracket's plan made with its own figures a pool member's, in place: no key moves", async () => {
    const limits = { perMinute: 100, perDay: 100 };
    const b = enterpriseBracket(limits);
    const members = Array.from({ length: BRACKET_POOL.apiKeys }, (_, m) => bracketPoolKeyValue('staging', b.id, m));
    // As an admin tool before this release made it: sized for one customer (100/min, 100 a day, rounded up).
    apigw.on(apigateway.GetUsagePlansCommand).resolves({
      items: [
        {
          id: 'plan-small',
          name: `animal-store-staging-enterprise-${b.id}`,
          apiStages: [{ apiId: 'api123', stage: 'v1' }],
          throttle: { rateLimit: 10, burstLimit: 1_000 },
          quota: { limit: 10_000, period: 'DAY' },
        },
      ],
    });
    apigw
      .on(apigateway.GetUsagePlanKeysCommand)
      .resolves({ items: members.map((value, i) => ({ id: `k${i}`, value })) });
    apigw.on(apigateway.UpdateUsagePlanCommand).resolves({});
    await keyAdmin(deps).create({ owner: 'smallco', plan: 'enterprise', ...limits });
    expect(apigw.calls().map((c) => c.args[0].constructor.name)).toEqual([
      'GetUsagePlansCommand',
      'UpdateUsagePlanCommand',
      'GetUsagePlanKeysCommand',
    ]);
    expect(apigw.commandCalls(apigateway.UpdateUsagePlanCommand)[0]!.args[0].input).toEqual({
      usagePlanId: 'plan-small',
      patchOperations: [
        { op: 'replace', path: '/throttle/rateLimit', value: String(MEMBER_PLAN.rateLimit) },
        { op: 'replace', path: '/throttle/burstLimit', value: String(MEMBER_PLAN.burstLimit) },
        { op: 'replace', path: '/quota/limit', value: String(MEMBER_PLAN.quotaPerDay) },
      ],
    });
    expect(apigw.commandCalls(apigateway.CreateApiKeyCommand)).toHaveLength(0);
  });

  it('moves a key with an API key of its own (from before pools) into its pool; purge deletes its own after the authorizer cache TTL', async () => {
    let t = Date.UTC(2036, 10, 22, 12);
    const admin = keyAdmin({ ...deps, now: () => t, revokedKeyGraceMs: 120_000 });
    const { key, record } = await admin.create({ owner: 'old-timer', plan: 'pro' });
    // As the tool before pools wrote it.
    const stored = (await deps.store.getById(record.keyId))!;
    await deps.store.update(stored, { apiGatewayKeyId: 'apikey-own' }, ['reconciledVersion']);
    expect((await authorize(key)).usageIdentifierKey).toBe(usageIdentifierKey(record.keyId));
    expect(await admin.show(record.keyId)).toMatchObject({ pending: true });
    const moved = await admin.reconcile(record.keyId);
    expect(moved.record).toMatchObject({ retiredApiKeyId: 'apikey-own' });
    expect(moved.record.apiGatewayKeyId).toBeUndefined();
    expect(moved.waiting).toEqual([expect.stringMatching(/^its old API key apikey-own \(deleted from /)]);
    expect((await authorize(key)).usageIdentifierKey).toBe(poolValueOf(record, 'staging'));
    expect(apigw.calls(), 'nothing deleted while a cached result may name it').toHaveLength(0);
    t += 121_000;
    expect((await admin.purge()).purged.map((k) => k.keyId)).toContain(record.keyId);
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand).map((c) => c.args[0].input)).toEqual([
      { apiKey: 'apikey-own' },
    ]);
    expect(await admin.show(record.keyId)).toMatchObject({ pending: false });
    expect((await admin.show(record.keyId)).retiredApiKeyId).toBeUndefined();
  });

  it('a failed purge keeps the key recorded with its old API key and reports it, so the next purge retries', async () => {
    let t = Date.UTC(2036, 10, 22, 12);
    const admin = keyAdmin({ ...deps, now: () => t });
    const { record } = await admin.create({ owner: 'leaver2', plan: 'pro' });
    const stored = (await deps.store.getById(record.keyId))!;
    await deps.store.update(stored, { apiGatewayKeyId: 'apikey-1' }, ['reconciledVersion']);
    await admin.revoke(record.keyId);
    t += 10 * 60_000;
    apigw.on(apigateway.DeleteApiKeyCommand).rejects(new Error('gateway down'));
    const { failed } = await admin.purge();
    expect(failed).toEqual([{ keyId: record.keyId, error: expect.stringMatching(/Error: gateway down/) }]);
    expect(await admin.show(record.keyId)).toMatchObject({ status: 'revoked', retiredApiKeyId: 'apikey-1' });
    apigw.on(apigateway.DeleteApiKeyCommand).resolves({});
    expect((await admin.purge()).failed).toEqual([]);
  });
});
