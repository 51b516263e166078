/**
 * No Lambda entry file is kept per function: each is generated from the route table (lib/config/lambda-entries.ts)
 * and imports its handler factory by convention. The bundle test (test/infra/bundles.test.ts) runs what the stack
 * generates; this checks the convention itself, where a broken one is cheap to read.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { LAMBDA_FUNCTIONS, handlerModule, lambdaEntrySource } from '../../lib/config/lambda-entries.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

it('has one function per route and the authorizer, and no entry files in the repository', () => {
  expect(LAMBDA_FUNCTIONS.map((f) => f.name)).toEqual([...ROUTES.map((r) => r.operationId), AUTHORIZER.name]);
  expect(existsSync(join(ROOT, 'lambdas/functions'))).toBe(false);
});

it.each(LAMBDA_FUNCTIONS)("finds $name's factory, <name>Handler, where its generated entry imports it", async (fn) => {
  const module = (await import(join(ROOT, handlerModule(fn.name)))) as Record<string, unknown>;
  expect(module[`${fn.name}Handler`]).toBeTypeOf('function');
  const source = lambdaEntrySource(fn, join(tmpdir(), 'entries'), ROOT);
  expect(source).toContain(`import { ${fn.name}Handler as factory }`);
  // Only a function whose entry declares the cursor secret carries the Secrets Manager client.
  expect(source.includes('secrets-manager.ts')).toBe(fn.access.cursorSecret === true);
});
