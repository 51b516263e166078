/**
 * The admin tool's API Gateway calls against aws-sdk-client-mock (no local engine exists for that control plane):
 * the exact calls, and the rollback when a step fails; records on DynamoDB Local, keys checked by the local API's
 * own authorizer function.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
// The control plane the admin tool drives (lib/admin/gateway.ts), mocked: no local engine exists for it.
import * as apigateway from '@aws-sdk/client-api-gateway';
import { API_KEY_VALUE_PATTERN, usageIdentifierKey } from '../../lambdas/domain/keys.ts';
import { usagePlanThrottle } from '../../contract/plans.ts';
import { enterpriseBracket } from '../../lib/admin/brackets.ts';
import { poolKeyValue, poolMemberOf } from '../../contract/key-pool.ts';
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

  it('creates the API key with a value derived from the key id, never the secret, within AWS API key value rules, and puts it on the plan', async () => {
    const { key, record } = await keyAdmin(deps).create({ owner: 'acme', plan: 'business' });
    const input = apigw.commandCalls(apigateway.CreateApiKeyCommand)[0]!.args[0].input;
    expect(input).toEqual({
      name: `animal-store-${record.keyId}`,
      value: usageIdentifierKey(record.keyId),
      enabled: true,
    });
    // Anyone with apigateway:GET reads API key values (get-api-keys --include-values): no part of the secret in it.
    expect(input.value).not.toContain(key.slice(4, 14));
    // API Gateway developer guide, "Usage plans and API keys": an API key value is alphanumeric, 20 to 128 characters.
    expect(input.value).toMatch(/^[A-Za-z0-9]{20,128}$/);
    expect(input.value).toMatch(API_KEY_VALUE_PATTERN);
    expect(apigw.commandCalls(apigateway.CreateUsagePlanKeyCommand)[0]!.args[0].input).toEqual({
      usagePlanId: 'plan-business',
      keyId: 'apikey-1',
      keyType: 'API_KEY',
    });
    expect(record.apiGatewayKeyId).toBe('apikey-1');
  });

  it("puts Enterprise keys on their bracket's usage plan, made on first use with the bracket's figures", async () => {
    await keyAdmin(deps).create({ owner: 'bigco', plan: 'enterprise', perMinute: 6000, perDay: 5_000_000 });
    // The same mapping as the standard plans (docs/deployment.md), each figure rounded up to 1, 3, 10, 30, ...
    const t = usagePlanThrottle({ perMinute: 6000, perDay: 5_000_000 });
    expect(t).toMatchObject({ rateLimit: 200, burstLimit: 5_000, guaranteed: false });
    const b = enterpriseBracket({ perMinute: 6000, perDay: 5_000_000 });
    expect(b).toMatchObject({ rateLimit: 300, burstLimit: 5_000 });
    expect(b.quotaPerDay).toBeGreaterThanOrEqual(t.quotaPerDay);
    expect(apigw.commandCalls(apigateway.CreateUsagePlanCommand)[0]!.args[0].input).toMatchObject({
      name: `animal-store-staging-enterprise-${b.id}`,
      apiStages: [{ apiId: 'api123', stage: 'v1' }],
      throttle: { rateLimit: b.rateLimit, burstLimit: b.burstLimit },
      quota: { limit: b.quotaPerDay, period: 'DAY' },
    });
    expect(apigw.commandCalls(apigateway.CreateUsagePlanKeyCommand)[0]!.args[0].input).toMatchObject({
      usagePlanId: 'plan-acme',
    });
  });

  it('rolls back the API key when the usage plan step fails, and writes no record', async () => {
    apigw.on(apigateway.CreateUsagePlanKeyCommand).rejects(new Error('TooManyRequestsException'));
    const before = (await localDeps.store.list()).length;
    await expect(keyAdmin(deps).create({ owner: 'acme', plan: 'pro' })).rejects.toThrow('TooManyRequests');
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand).map((c) => c.args[0].input)).toEqual([
      { apiKey: 'apikey-1' },
    ]);
    expect((await localDeps.store.list()).length).toBe(before);
  });

  it('rolls back the gateway steps when the DynamoDB write fails', async () => {
    const failing = { ...deps, store: { ...deps.store, put: () => Promise.reject(new Error('write failed')) } };
    await expect(keyAdmin(failing).create({ owner: 'acme', plan: 'pro' })).rejects.toThrow('write failed');
    expect(apigw.commandCalls(apigateway.DeleteUsagePlanKeyCommand).map((c) => c.args[0].input)).toEqual([
      { usagePlanId: 'plan-pro', keyId: 'apikey-1' },
    ]);
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand)).toHaveLength(1);
  });

  it('moves a key out of its old plan before adding it to the new one, and restores it when the move fails', async () => {
    const admin = keyAdmin(deps);
    const { record } = await admin.create({ owner: 'mover', plan: 'pro' });
    apigw.resetHistory();
    await admin.setPlan(record.keyId, { plan: 'business' });
    const calls = apigw.calls().map((c) => [c.args[0].constructor.name, c.args[0].input]);
    expect(calls).toEqual([
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-pro', keyId: 'apikey-1' }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-business', keyId: 'apikey-1', keyType: 'API_KEY' }],
    ]);
    apigw.resetHistory();
    apigw.on(apigateway.CreateUsagePlanKeyCommand, { usagePlanId: 'plan-pro' }).rejects(new Error('boom'));
    await expect(admin.setPlan(record.keyId, { plan: 'pro' })).rejects.toThrow('boom');
    expect(apigw.commandCalls(apigateway.CreateUsagePlanKeyCommand).map((c) => c.args[0].input.usagePlanId)).toEqual([
      'plan-pro',
      'plan-business',
    ]);
    expect((await admin.show(record.keyId)).plan).toBe('business');
  });

  it('creates a Free key without any API Gateway call: no CreateApiKey, no usage plan key (the pool serves it)', async () => {
    const admin = keyAdmin(deps);
    const { record } = await admin.create({ owner: 'hobbyist', plan: 'free' });
    expect(apigw.calls(), 'no call to the API Gateway control plane').toHaveLength(0);
    expect(apigw.commandCalls(apigateway.CreateApiKeyCommand)).toHaveLength(0);
    expect(record.apiGatewayKeyId).toBeUndefined();
    expect(record.usagePlanId).toBeUndefined();
    // Revoking and purging it touch nothing either: the pool member is shared, never deleted for one customer.
    await admin.revoke(record.keyId);
    expect(apigw.calls()).toHaveLength(0);
    const { purged } = await keyAdmin({ ...deps, now: () => Date.now() + 3_600_000 }).purge();
    expect(purged.map((k) => k.keyId)).not.toContain(record.keyId);
  });

  it('gives a Free key moving to a paying plan an API key of its own on that plan; moving back keeps it', async () => {
    const admin = keyAdmin(deps);
    const { record } = await admin.create({ owner: 'upgrader', plan: 'free' });
    const moved = await admin.setPlan(record.keyId, { plan: 'pro' });
    expect(apigw.commandCalls(apigateway.CreateApiKeyCommand).map((c) => c.args[0].input)).toEqual([
      { name: `animal-store-${record.keyId}`, value: usageIdentifierKey(record.keyId), enabled: true },
    ]);
    expect(apigw.commandCalls(apigateway.CreateUsagePlanKeyCommand).map((c) => c.args[0].input)).toEqual([
      { usagePlanId: 'plan-pro', keyId: 'apikey-1', keyType: 'API_KEY' },
    ]);
    expect(moved).toMatchObject({ plan: 'pro', apiGatewayKeyId: 'apikey-1' });
    apigw.resetHistory();
    // Back to Free: out of Pro, into the Free plan with its own API key (cached authorizer results still name it).
    const back = await admin.setPlan(record.keyId, { plan: 'free' });
    expect(apigw.calls().map((c) => [c.args[0].constructor.name, c.args[0].input])).toEqual([
      ['DeleteUsagePlanKeyCommand', { usagePlanId: 'plan-pro', keyId: 'apikey-1' }],
      ['CreateUsagePlanKeyCommand', { usagePlanId: 'plan-free', keyId: 'apikey-1', keyType: 'API_KEY' }],
    ]);
    expect(back).toMatchObject({ plan: 'free', apiGatewayKeyId: 'apikey-1' });
  });

  it('undoes the new API key when a Free key cannot join its new paying plan, and keeps it Free', async () => {
    const admin = keyAdmin(deps);
    const { record } = await admin.create({ owner: 'upgrader2', plan: 'free' });
    apigw.on(apigateway.CreateUsagePlanKeyCommand).rejects(new Error('TooManyRequestsException'));
    await expect(admin.setPlan(record.keyId, { plan: 'business' })).rejects.toThrow('TooManyRequests');
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand).map((c) => c.args[0].input)).toEqual([
      { apiKey: 'apikey-1' },
    ]);
    const after = await admin.show(record.keyId);
    expect(after).toMatchObject({ plan: 'free' });
    expect(after.apiGatewayKeyId).toBeUndefined();
  });

  it("the authorizer names a Free key's pool member on its stage, and a paying key its own API key", async () => {
    const admin = keyAdmin(deps);
    const free = await admin.create({ owner: 'pooled', plan: 'free' });
    // The authorizer names keys for the template's stage (USAGE_KEYS_STAGE), also locally where STAGE=local, so the
    // local gateway finds them in the template (key-pool.test.ts, spent-keys.test.ts).
    expect((await authorize(free.key)).usageIdentifierKey).toBe(
      poolKeyValue('staging', poolMemberOf(free.record.keyId)),
    );
    await admin.setPlan(free.record.keyId, { plan: 'pro' });
    expect((await authorize(free.key)).usageIdentifierKey).toBe(usageIdentifierKey(free.record.keyId));
  });

  it('the authorizer returns the same derived value as usageIdentifierKey, for the first secret and after a rotation', async () => {
    const admin = keyAdmin(deps);
    const { key, record } = await admin.create({ owner: 'acme', plan: 'pro' });
    const value = apigw.commandCalls(apigateway.CreateApiKeyCommand)[0]!.args[0].input.value;
    expect((await authorize(key)).usageIdentifierKey).toBe(value);
    apigw.resetHistory();
    const rotated = await admin.rotate(record.keyId);
    expect((await authorize(rotated.key)).usageIdentifierKey).toBe(value);
    await expect(authorize(key)).rejects.toThrow('Unauthorized');
  });

  // With apiKeySourceType AUTHORIZER, API Gateway answers 403 when the usageIdentifierKey of an authorizer result
  // (cached up to the authorizer TTL) names an API key that was deleted or is in no usage plan of the stage.
  it('rotates without touching API Gateway: the same API key and usage plan serve the new secret', async () => {
    const admin = keyAdmin(deps);
    const { record } = await admin.create({ owner: 'rotator', plan: 'pro' });
    apigw.resetHistory();
    const rotated = await admin.rotate(record.keyId);
    expect(apigw.calls()).toHaveLength(0);
    expect(rotated.record.apiGatewayKeyId).toBe(record.apiGatewayKeyId);
  });

  it("revokes without deleting the API key; purge deletes it (never its bracket's shared plan) only after the authorizer cache TTL", async () => {
    let t = Date.UTC(2026, 10, 22, 12);
    const admin = keyAdmin({ ...deps, now: () => t, revokedKeyGraceMs: 120_000 });
    const { record } = await admin.create({ owner: 'leaver', plan: 'enterprise', perMinute: 10, perDay: 100 });
    apigw.resetHistory();
    expect((await admin.revoke(record.keyId)).status).toBe('revoked');
    expect(apigw.calls(), 'no gateway call on revoke').toHaveLength(0);
    t += 60_000;
    expect((await admin.purge()).purged.map((k) => k.keyId)).not.toContain(record.keyId);
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand)).toHaveLength(0);
    t += 61_000;
    expect((await admin.purge()).purged.map((k) => k.keyId)).toContain(record.keyId);
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand).map((c) => c.args[0].input)).toContainEqual({
      apiKey: 'apikey-1',
    });
    expect(apigw.commandCalls(apigateway.DeleteUsagePlanCommand), 'the shared bracket plan stays').toHaveLength(0);
    const after = await admin.show(record.keyId);
    expect(after).toMatchObject({ status: 'revoked' });
    expect(after.apiGatewayKeyId).toBeUndefined();
    apigw.resetHistory();
    await admin.purge();
    expect(apigw.commandCalls(apigateway.DeleteApiKeyCommand), 'purged once').toHaveLength(0);
  });

  it('a failed purge keeps the key revoked and its API key recorded and reports it, so the next purge retries', async () => {
    let t = Date.UTC(2026, 10, 22, 12);
    const admin = keyAdmin({ ...deps, now: () => t });
    const { record } = await admin.create({ owner: 'leaver2', plan: 'pro' });
    await admin.revoke(record.keyId);
    t += 10 * 60_000;
    apigw.on(apigateway.DeleteApiKeyCommand).rejects(new Error('gateway down'));
    const { failed } = await admin.purge();
    expect(failed).toContainEqual({ keyId: record.keyId, error: 'Error: gateway down' });
    expect(await admin.show(record.keyId)).toMatchObject({ status: 'revoked', apiGatewayKeyId: 'apikey-1' });
  });
});
