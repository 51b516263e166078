/** A local API on fresh tables, and the admin tool's `--local` dependencies pointed at the same DynamoDB Local. */
import { afterAll, beforeAll } from 'vitest';
import { realDeps, runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import type { LocalApiOptions } from '../../lib/local/app.ts';
import { startTestApi, uniquePrefix, type TestApi } from './api.ts';

export async function startLocalAdmin(opts: LocalApiOptions = {}): Promise<{ api: TestApi; deps: AdminDeps }> {
  const prefix = uniquePrefix();
  const api = await startTestApi({ ...opts, tablePrefix: prefix });
  // The admin's --local target is read from the environment, as a developer's shell would set it.
  process.env.ANIMAL_STORE_DYNAMODB_PORT = new URL(api.dynamoEndpoint).port;
  process.env.ANIMAL_STORE_TABLE_PREFIX = prefix;
  return { api, deps: await realDeps({ local: true }) };
}

/** The same, with the admin tool on the API's clock: a test that moves time moves it for both. */
export async function startLocalAdminOnApiClock(opts: LocalApiOptions = {}) {
  const { api, deps } = await startLocalAdmin(opts);
  return { api, deps: { ...deps, now: api.clock.now } satisfies AdminDeps };
}

/** Runs one admin command with `--local` on the given dependencies, capturing what it prints. */
export async function runLocalAdmin(
  deps: AdminDeps,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    [...args, '--local'],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    async () => deps,
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/**
 * For a test file: `startLocalAdmin()` in beforeAll (`api` and `deps` are there once it has run), closed in afterAll;
 * `status(key)` is the status a listing with `key` gets.
 */
export function localAdminFixture(): {
  api: TestApi;
  deps: AdminDeps;
  readonly status: (key: string) => Promise<number>;
} {
  const fixture = {
    status: async (key: string) => (await fixture.api.call('/pets', { key })).status,
  } as ReturnType<typeof localAdminFixture>;
  beforeAll(async () => {
    Object.assign(fixture, await startLocalAdmin());
  });
  afterAll(() => fixture.api?.close());
  return fixture;
}
