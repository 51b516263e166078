/**
 * A handler may return its AppError instead of throwing it (listOrders returns its 501, saving the throw's path
 * through middy): the client must not be able to tell. The same error, returned or thrown, gets the same status,
 * headers and Error object, and is counted under the same metric.
 */
import { describe, expect, it } from 'vitest';
import { LIVE_ALIAS } from '../../contract/aliases.ts';
import { LIST_ORDERS } from '../../contract/operations/list-orders.ts';
import { loadConfig } from '../../lambdas/shared/config.ts';
import { apiHandler, isReadableAnswer } from '../../lambdas/shared/http.ts';
import { createRuntime } from '../../lambdas/shared/runtime.ts';
import { AppError, UnavailableError } from '../../lambdas/domain/errors.ts';
import { localTableEnv } from '../../lambdas/storage/provision.ts';

const lines: string[] = [];
const runtime = createRuntime(
  loadConfig({
    ...localTableEnv('returned-error'),
    LOG_LEVEL: 'SILENT',
    RATE_LIMITER: 'off',
    CORS_ALLOWED_ORIGINS: 'https://app.example',
  }),
  { write: (line: string) => void lines.push(line) },
);
const authorizer = { keyId: 'key_test', plan: 'free', perMinute: 60, perDay: 1000 };
const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:listOrders';
/** An invocation as API Gateway makes it, through the `live` alias (version 3 runs), or of version 3 directly. */
const call = (handler: ReturnType<typeof apiHandler>, invokedFunctionArn = `${ARN}:${LIVE_ALIAS}`) =>
  handler(
    {
      httpMethod: 'GET',
      path: '/store/orders',
      headers: { Origin: 'https://app.example' },
      requestContext: { requestId: 'r1', authorizer },
    } as never,
    {
      functionName: 'listOrders',
      functionVersion: '3',
      invokedFunctionArn,
      getRemainingTimeInMillis: () => 10_000,
    } as never,
  );

const ERRORS = {
  'a 501': () => new AppError('not_implemented', 'Not yet.'),
  'a 503 with Retry-After': () => new UnavailableError('Deadline', 2),
  'a 500': () => new AppError('internal_error'),
};

describe('an AppError a handler returns', () => {
  for (const [name, make] of Object.entries(ERRORS))
    it(`is answered as the same error thrown: ${name}`, async () => {
      lines.length = 0;
      const thrown = await call(
        apiHandler(runtime, LIST_ORDERS, async () => {
          throw make();
        }),
      );
      const thrownMetrics = lines.filter((l) => l.includes('_aws')).map((l) => Object.keys(JSON.parse(l)).sort());
      lines.length = 0;
      const returned = await call(apiHandler(runtime, LIST_ORDERS, async () => make()));
      const returnedMetrics = lines.filter((l) => l.includes('_aws')).map((l) => Object.keys(JSON.parse(l)).sort());
      expect(returned).toEqual(thrown);
      expect(JSON.parse(returned.body)).toEqual({
        code: make().code,
        message: make().message,
        status: make().status,
      });
      expect(returned.headers).toMatchObject({ 'Access-Control-Allow-Origin': 'https://app.example' });
      expect(returnedMetrics).toEqual(thrownMetrics);
      expect(returnedMetrics.flat().length).toBeGreaterThan(0);
    });
});

describe('a 5xx the function answers', () => {
  /** The dimension sets each EMF line counts `name` under, with the line's values. */
  const countedSets = (name: string) =>
    lines
      .map((l) => JSON.parse(l) as Record<string, any>)
      .filter((l) => l._aws?.CloudWatchMetrics.some((d: any) => d.Metrics.some((m: any) => m.Name === name)))
      .flatMap((l) =>
        l._aws.CloudWatchMetrics.flatMap((d: any) =>
          (d.Dimensions as string[][]).map((set) => Object.fromEntries(set.map((k) => [k, l[k]]))),
        ),
      );

  // The deploy gates (lib/constructs/version-gates.ts) compare the new version's count with the old one's: a
  // version whose limiter or storage calls fail answers 503, not 500, and must count as much as a handler bug.
  it.each(['a 500', 'a 503 with Retry-After'] as const)(
    '%s is counted as ServerError per operation and per version',
    async (name) => {
      lines.length = 0;
      await call(apiHandler(runtime, LIST_ORDERS, async () => ERRORS[name]()));
      const sets = countedSets('ServerError');
      const base = { service: expect.any(String), stage: expect.any(String) };
      expect(sets).toEqual([
        base,
        { ...base, operation: LIST_ORDERS.operationId, version: '3' },
        { ...base, operation: LIST_ORDERS.operationId },
      ]);
    },
  );

  it('an answer API Gateway cannot read (its 502, with no Lambda error) is counted the same way', async () => {
    lines.length = 0;
    // A status the envelope passes through as it is: a string, which the gateway refuses.
    const answer = await call(apiHandler(runtime, LIST_ORDERS, async () => ({ statusCode: '200' as never })));
    expect(isReadableAnswer(answer)).toBe(false);
    expect(countedSets('ServerError')).toContainEqual({
      service: expect.any(String),
      stage: expect.any(String),
      operation: LIST_ORDERS.operationId,
      version: '3',
    });
    lines.length = 0;
    expect(isReadableAnswer(await call(apiHandler(runtime, LIST_ORDERS, async () => ({ statusCode: 200 }))))).toBe(
      true,
    );
    expect(countedSets('ServerError')).toEqual([]);
  });

  // The pre-traffic check invokes a version by its number, which Lambda counts under that qualifier, not among the
  // alias's invocations the gates divide by: its failures must not stand for the new version before the shift.
  it('of a version invoked directly (the pre-traffic check’s), is counted under the default dimensions alone, in no gate’s set', async () => {
    for (const answer of [
      async () => ERRORS['a 500'](),
      async () => ERRORS['a 503 with Retry-After'](),
      async () => ({ statusCode: '200' as never }),
    ]) {
      lines.length = 0;
      await call(apiHandler(runtime, LIST_ORDERS, answer), `${ARN}:3`);
      expect(countedSets('ServerError')).toEqual([{ service: expect.any(String), stage: expect.any(String) }]);
      lines.length = 0;
      await call(apiHandler(runtime, LIST_ORDERS, answer), ARN);
      expect(countedSets('ServerError')).toEqual([{ service: expect.any(String), stage: expect.any(String) }]);
      lines.length = 0;
      await call(apiHandler(runtime, LIST_ORDERS, answer));
      expect(countedSets('ServerError')).toContainEqual(expect.objectContaining({ version: '3' }));
    }
  });

  it('a 501, the contract’s answer, is not', async () => {
    lines.length = 0;
    await call(apiHandler(runtime, LIST_ORDERS, async () => ERRORS['a 501']()));
    expect(countedSets('ServerError')).toEqual([]);
  });
});
