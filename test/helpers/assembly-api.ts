/** A test API serving the synthesized stack, for the tests that also change copies of its template. */
import { afterAll, beforeAll } from 'vitest';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import { startTestApi, type TestApi } from './api.ts';

/**
 * For a test file: the synthesized stack (`assembly`) and a test API serving it (`api`), there once beforeAll has
 * run (a synth on a cache miss: up to 4 minutes); the API is closed in afterAll.
 */
export function assemblyApiFixture(): { assembly: LocalAssembly; api: TestApi } {
  const fixture = {} as ReturnType<typeof assemblyApiFixture>;
  beforeAll(async () => {
    fixture.assembly = await localAssembly();
    fixture.api = await startTestApi({ assembly: fixture.assembly });
  }, 240_000);
  afterAll(() => fixture.api?.close());
  return fixture;
}
