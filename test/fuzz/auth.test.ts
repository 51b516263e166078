/**
 * The "ignored auth" check (every operation without a key, with a wrong scheme, with an unknown or a
 * revoked key → 401, never 2xx) and undeclared methods on declared paths (→ 405 with Allow), over HTTP to the local
 * server on DynamoDB Local. The authorizer cache is off (the local default), so a revocation shows at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, resourcePaths } from '../../contract/routes.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { newStats, send, type Pet } from './exchange.ts';
import { fixturesSending, requestInit, sampleRequests } from '../helpers/samples.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { createPetWith, enterpriseKey } from './keys.ts';
import { badCredentials } from './arbitraries.ts';
import { UNDECLARED_METHODS } from './arbitraries-paths.ts';

let api: TestApi;
let world: { key: string; pets: Pet[] };
const stats = newStats();

beforeAll(async () => {
  api = await startTestApi();
  const key = await enterpriseKey(api, 'auth');
  world = { key, pets: [await createPetWith(api, key, { name: 'Auth target', categoryId: 1 })] };
});
afterAll(async () => {
  console.info(`[auth] ${stats.requests} requests, ${stats.fiveXx} 5xx, by status ${JSON.stringify(stats.byStatus)}`);
  await api?.close();
});

describe('ignored auth: bad credentials never reach an operation', () => {
  /**
   * Each operation's sample request (test/helpers/samples.ts), which succeeds with a good key: each request that
   * names a pet gets one of its own, so a control that changes or deletes it touches nothing else.
   */
  const requests = () =>
    sampleRequests(
      fixturesSending(async (r) => (await fetch(`${api.url}${r.path}`, requestInit(r, { key: world.key }))).json()),
    );

  it('every operation answers 401 (with WWW-Authenticate), never 2xx, without a key, with a wrong scheme or an unknown key', async () => {
    let checked = 0;
    for (const r of await requests()) {
      for (const [why, headers] of Object.entries(badCredentials(world.key))) {
        await send(
          api.url,
          {
            ...r,
            headers: { ...r.headers, ...headers },
            expect: { status: 401, code: 'unauthorized' },
            why,
          },
          stats,
        );
        checked++;
      }
      // The control: the same request with the key is not refused.
      const ok = await fetch(`${api.url}${r.path}`, requestInit(r, { key: world.key }));
      expect(ok.status, `${r.operationId} with a good key`).toBe(r.status);
    }
    expect(checked).toBe(ROUTES.length * Object.keys(badCredentials(world.key)).length);
  });

  it('a revoked key gets 401 on every operation, at once', async () => {
    const keyAdminStore = createKeyAdminStore(api.storage);
    // The old key form's exact shape: a token of another shape is refused before any read, revoked or not.
    const key = `ask_${'fuzzrevoked'.padEnd(43, 'r')}`;
    const record = {
      hash: hashKey(key),
      keyId: 'key_fuzzrevoked',
      owner: 'fuzz',
      plan: 'business' as const,
      status: 'active' as const,
      createdAt: new Date().toISOString(),
    };
    await keyAdminStore.upsert(record);
    const listed = await fetch(`${api.url}/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(listed.status, 'the key works before it is revoked').toBe(200);
    await keyAdminStore.update(record, { status: 'revoked' });
    for (const r of await requests()) {
      await send(
        api.url,
        {
          ...r,
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          expect: { status: 401, code: 'unauthorized' },
          why: 'revoked key',
        },
        stats,
      );
    }
  });
});

describe('undeclared methods on declared paths', () => {
  it('answer 405 with the exact Allow header and the Error object, with or without a key', async () => {
    const paths = resourcePaths();
    let checked = 0;
    let expected = 0;
    for (const [template, methods] of paths) {
      const path = template.replace('{petId}', String(world.pets[0]!.id));
      const allow = methods.join(', ');
      const undeclared = UNDECLARED_METHODS.filter((m) => !(methods as string[]).includes(m));
      expected += undeclared.length * 2;
      for (const method of undeclared) {
        for (const headers of [{ Authorization: `Bearer ${world.key}` }, {}] as Record<string, string>[]) {
          await send(
            api.url,
            {
              method,
              path,
              headers,
              expect: { status: 405, code: 'method_not_allowed', allow },
              why: 'undeclared method',
            },
            stats,
          );
          checked++;
        }
      }
    }
    expect(checked).toBe(expected);
  });
});
