import { expect, it } from 'vitest';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';

it('tells an admin whose DynamoDB does not answer where to look, in one line and a non-zero exit', async () => {
  const unreachable = () => Promise.reject(new UnavailableError('ECONNREFUSED'));
  const deps = { store: { list: unreachable, getById: unreachable } } as unknown as AdminDeps;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    ['keys', 'list', '--local'],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    async () => deps,
  );
  expect(code).toBe(1);
  expect(out).toEqual([]);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^error: DynamoDB did not answer \(ECONNREFUSED\)\. With --local: is `npm start` running/);
});

it('accepts only the stages the CDK app deploys, and says which before connecting to anything', async () => {
  const err: string[] = [];
  let built = false;
  const code = await runAdmin(
    ['keys', 'list', '--stage', 'dev'],
    { out: () => undefined, err: (l) => err.push(l) },
    () => {
      built = true;
      return Promise.reject(new Error('not reached'));
    },
  );
  expect({ code, built, err }).toEqual({
    code: 1,
    built: false,
    err: [`error: unknown stage "dev" (use ${STAGE_NAMES.join(' or ')})`],
  });
  expect(STAGE_NAMES).toEqual(Object.keys(STAGES));
});
