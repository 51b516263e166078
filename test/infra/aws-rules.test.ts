/**
 * AWS service rules that `cdk synth` does not check, applied to both stages' synthesized templates. Each names the
 * AWS documentation or behaviour it encodes; each failed on the templates before the alarms, gateway responses,
 * MOCK methods and usage plans were fixed.
 */
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../contract/errors.ts';
import { GATEWAY_RESPONSES, GATEWAY_RESPONSE_TYPES } from '../../contract/gateway-responses.ts';
import { ACCOUNT_THROTTLE, PLANS, PLAN_NAMES, planUsageKeyValue } from '../../contract/plans.ts';
import { AUTHORIZER } from '../../contract/routes.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { planThrottles } from '../../lib/config/capacity.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { VERSION_DIMENSION } from '../../lib/constructs/version-gates.ts';
import { functionAccess } from '../../lib/stacks/function-access.ts';
import { captureEmf, type EmittedMetric } from './emf-capture.ts';
import { accessLogFilterMetrics } from './filter-pattern-eval.ts';
import { NOT_FOR_ALARMS, checkExpression, type MathType } from './metric-math.ts';
import { alarmsOf, metricsOf, sources, type MetricDataQuery } from './template-queries.ts';
import { resourcesOf, synthTemplates, type CfnTemplate } from './templates.ts';

let templates: Record<StageName, CfnTemplate>;
beforeAll(() => void (templates = synthTemplates()), 240_000);

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const t = () => templates[stageName];

  describe('CloudWatch alarms', () => {
    // CloudWatch User Guide, "Metric math syntax and functions": the argument types of each function, arrays of time
    // series only, and "any expression used in a PutMetricAlarm operation must return a single time series". These
    // are checked when the alarm is created (a rejected alarm rolls the whole stack back), never by synth.
    it("metric math type-checks against CloudWatch's documented function signatures and returns one time series", () => {
      const maths = alarmsOf(t()).filter(({ p }) => p.Metrics);
      expect(maths.length).toBeGreaterThan(0);
      for (const { id, p } of maths) {
        const queries = p.Metrics as MetricDataQuery[];
        const ids: Record<string, MathType> = {};
        for (const q of queries) if (q.MetricStat) ids[q.Id] = 'TS';
        // PutMetricAlarm: up to 10 metrics, exactly one query returning data.
        expect(Object.keys(ids).length, id).toBeLessThanOrEqual(10);
        const returned = queries.filter((q) => q.ReturnData !== false);
        expect(returned, id).toHaveLength(1);
        for (const q of queries.filter((x) => x.Expression)) {
          const r = checkExpression(q.Expression!, ids);
          expect(r.errors, `${id}: ${q.Expression}`).toEqual([]);
          if (q === returned[0]) expect(r.type, `${id}: ${q.Expression}`).toBe('TS');
          // The guide recommends against these in alarms: they act differently when an alarm fetches extra data.
          expect(
            [...r.functions].filter((f) => NOT_FOR_ALARMS.includes(f)),
            `${id}: ${q.Expression}`,
          ).toEqual([]);
          // A sum of series is empty when one series has no data in the period: each needs FILL.
          expect([...r.unfilledSumOperands], `${id}: ${q.Expression}`).toEqual([]);
        }
      }
    });

    it('the checker rejects what CloudWatch rejects, and accepts the documented forms', () => {
      const ts = { errors: 'TS', requests: 'TS', m1: 'TS', m2: 'TS' } as const;
      // CloudWatch: "Unsupported operand type(s) for MAX: '[Array[TimeSeries, Scalar]]'".
      expect(checkExpression('100 * errors / MAX([requests, 1])', ts).errors).toEqual([
        'Array elements must be time series: [Array[TimeSeries, Scalar]]',
      ]);
      expect(checkExpression('IF(requests > 0, 100 * errors / requests, 0)', ts)).toMatchObject({
        errors: [],
        type: 'TS',
      });
      expect(checkExpression('SUM(m1)', ts)).toMatchObject({ errors: [], type: 'S' });
      expect(checkExpression('m1 + m2', ts).unfilledSumOperands).toEqual(new Set(['m1', 'm2']));
      expect(checkExpression('FILL(m1, 0) + FILL(m2, 0)', ts)).toMatchObject({
        errors: [],
        type: 'TS',
        unfilledSumOperands: new Set(),
      });
    });

    // DynamoDB reports SystemErrors and ThrottledRequests per table AND operation: an alarm must name each operation
    // the functions perform on the table (the IAM actions the stack grants on it, and transactions the code sends).
    it('per-table DynamoDB alarms cover every operation the functions may perform on the table', () => {
      // Which tables a transaction writes is declared on the grants (`transactional`), as the stack grants them: a
      // table any function writes, but never in a transaction, needs no TransactWriteItems alarm.
      const transactional = new Set(
        Object.values(functionAccess()).flatMap((a) =>
          a.tables.filter((g) => g.transactional).map((g) => tableLogicalIdOf(g.table)),
        ),
      );
      // And the code sends transactions exactly when some grant declares one.
      expect(/new TransactWriteCommand\(/.test(sources('lambdas').join('\n'))).toBe(transactional.size > 0);
      const policies = resourcesOf(t(), 'AWS::IAM::Policy').flatMap(
        ([, r]) => r.Properties.PolicyDocument.Statement as any[],
      );
      for (const [tableId] of resourcesOf(t(), 'AWS::DynamoDB::GlobalTable')) {
        const granted = policies
          .filter((s) => JSON.stringify(s.Resource).includes(`"${tableId}"`))
          .flatMap((s) => [s.Action].flat() as string[])
          .filter((a) => a.startsWith('dynamodb:'))
          .map((a) => a.slice('dynamodb:'.length));
        // A table no function may use (the admin tool's history) has no alarm: its errors reach the admin at once.
        if (!granted.length) continue;
        // A transaction's writes are reported under TransactWriteItems, on each table it writes.
        const writes = transactional.has(tableId) ? ['TransactWriteItems'] : [];
        for (const metric of ['SystemErrors', 'ThrottledRequests']) {
          const alarm = alarmsOf(t()).find(({ p }) =>
            metricsOf(p).some((m) => m.MetricName === metric && JSON.stringify(m.Dimensions).includes(`"${tableId}"`)),
          );
          expect(alarm, `${metric} ${tableId}`).toBeDefined();
          const operations = metricsOf(alarm!.p).map((m) => m.Dimensions!.find((d) => d.Name === 'Operation')?.Value);
          for (const op of [...new Set([...granted, ...writes])])
            expect(operations, `${metric} ${tableId}`).toContain(op);
        }
      }
    });

    // "Throwing Unauthorized" is how a TOKEN authorizer answers 401, and Lambda counts it in Errors: an Errors alarm
    // on the authorizer fires for every unknown key. Only a comparison of its versions may use them (the deploy
    // gate: the new version's Errors, by ExecutedVersion, against the old one's).
    it("no alarm watches the authorizer's Lambda Errors, except to compare its versions", () => {
      const [authorizerId] = resourcesOf(t(), 'AWS::Lambda::Function').find(([, f]) =>
        f.Properties.Description?.endsWith(`: ${AUTHORIZER.name}`),
      )!;
      const onAuthorizerErrors = alarmsOf(t()).filter(({ p }) =>
        metricsOf(p).some(
          (m) =>
            m.Namespace === 'AWS/Lambda' &&
            m.MetricName === 'Errors' &&
            JSON.stringify(m.Dimensions).includes(`"${authorizerId}"`),
        ),
      );
      const comparesVersions = ({ p }: (typeof onAuthorizerErrors)[number]) =>
        metricsOf(p).some((m) => m.MetricName === 'Errors' && m.Dimensions?.some((d) => d.Name === 'ExecutedVersion'));
      expect(onAuthorizerErrors.filter((a) => !comparesVersions(a)).map((a) => a.id)).toEqual([]);
    });

    describe('on custom metrics', () => {
      let emitted: EmittedMetric[];
      beforeAll(async () => {
        // The stage's function environment, as deployed (plain values: table names are references).
        const env: Record<string, string> = {};
        for (const [, fn] of resourcesOf(t(), 'AWS::Lambda::Function')) {
          for (const [k, v] of Object.entries(fn.Properties.Environment?.Variables ?? {})) {
            if (typeof v !== 'string' || k === 'NODE_OPTIONS') continue;
            if (k in env && env[k] !== v && k !== 'LOG_LEVEL') throw new Error(`functions disagree on ${k}`);
            env[k] = v;
          }
        }
        emitted = await captureEmf(env, inject('dynamoEndpoint'));
      }, 180_000);

      it('the local run emitted every metric the code counts', () => {
        const counted = new Set(
          sources('lambdas').flatMap((s) => [...s.matchAll(/\bcount\('(\w+)'/g)].map((m) => m[1]!)),
        );
        expect(counted.size).toBeGreaterThan(0);
        expect([...counted].filter((n) => !emitted.some((e) => e.name === n))).toEqual([]);
      });

      // CloudWatch: "a metric is uniquely defined by a name, a namespace, and zero or more dimensions"; an alarm
      // on a metric whose dimension set the code never publishes stays in INSUFFICIENT_DATA (here: OK) for ever.
      // The gateway's own 429s are published by metric filters on the access log, under the dimensions its lines carry.
      it('every alarm on a custom metric watches a (namespace, name, exact dimension set) the functions or the access log publish', () => {
        const custom = alarmsOf(t()).flatMap(({ id, p }) =>
          metricsOf(p)
            .filter((m) => !m.Namespace.startsWith('AWS/'))
            .map((m) => ({ id, m })),
        );
        expect(custom.length).toBeGreaterThan(0);
        // A per-version count's operation and version are each function's own (the version a template reference):
        // their names must match exactly, their values are whatever the local run's function had.
        const perFunction = new Set(['operation', VERSION_DIMENSION]);
        const shape = (dims: Record<string, unknown>) =>
          JSON.stringify(
            Object.entries(dims)
              .map(([k, v]) => [k, perFunction.has(k) ? '*' : v])
              .sort(),
          );
        for (const { id, m } of custom) {
          const dims = Object.fromEntries((m.Dimensions ?? []).map((d) => [d.Name, d.Value]));
          const match = [...emitted, ...accessLogFilterMetrics(t())].find(
            (e) => e.namespace === m.Namespace && e.name === m.MetricName && shape(e.dimensions) === shape(dims),
          );
          expect(
            match,
            `${id}: ${m.Namespace}/${m.MetricName} ${JSON.stringify(dims)}; emitted: ${JSON.stringify(emitted.filter((e) => e.name === m.MetricName))}`,
          ).toBeDefined();
        }
      });

      // API Gateway's 5XXError counts every 5xx it returns, the 501 of an operation listed without a contract too: an
      // alarm on it must subtract the functions' NotImplemented count, or a client calling that operation pages
      // someone and rolls a production deploy back.
      it('every alarm on API 5XXError leaves out the 501s the functions count as NotImplemented', () => {
        const on5xx = alarmsOf(t()).filter(({ p }) => metricsOf(p).some((m) => m.MetricName === '5XXError'));
        expect(on5xx.length).toBeGreaterThan(0);
        for (const { id, p } of on5xx) {
          const q = (p.Metrics as MetricDataQuery[]).find((m) => m.MetricStat?.Metric.MetricName === 'NotImplemented');
          expect(q, id).toBeDefined();
          expect((p.Metrics as MetricDataQuery[]).find((m) => m.ReturnData !== false)?.Expression, id).toContain(
            `FILL(errors, 0) - FILL(${q!.Id}, 0)`,
          );
        }
        expect(emitted.some((e) => e.name === 'NotImplemented')).toBe(true);
      });
    });
  });

  describe('API Gateway', () => {
    // "Gateway response types for API Gateway": each type has a default status; DEFAULT_4XX/DEFAULT_5XX with a
    // status code changes the status of every type without a response of its own.
    const AWS_DEFAULT_STATUS: Record<string, number> = {
      ACCESS_DENIED: 403,
      API_CONFIGURATION_ERROR: 500,
      AUTHORIZER_CONFIGURATION_ERROR: 500,
      AUTHORIZER_FAILURE: 500,
      BAD_REQUEST_BODY: 400,
      BAD_REQUEST_PARAMETERS: 400,
      EXPIRED_TOKEN: 403,
      INTEGRATION_FAILURE: 504,
      INTEGRATION_TIMEOUT: 504,
      INVALID_API_KEY: 403,
      INVALID_SIGNATURE: 403,
      MISSING_AUTHENTICATION_TOKEN: 403,
      QUOTA_EXCEEDED: 429,
      REQUEST_TOO_LARGE: 413,
      RESOURCE_NOT_FOUND: 404,
      THROTTLED: 429,
      UNAUTHORIZED: 401,
      UNSUPPORTED_MEDIA_TYPE: 415,
      WAF_FILTERED: 403,
    };

    it('every gateway response type has a response of its own, answering its own status with a matching Error object', () => {
      const cdkTypes = Object.values(ResponseType)
        .filter((v): v is ResponseType => v instanceof ResponseType)
        .map((r) => r.responseType);
      expect([...GATEWAY_RESPONSE_TYPES].sort()).toEqual([...new Set(cdkTypes)].sort());
      expect(Object.keys(AWS_DEFAULT_STATUS).sort()).toEqual(
        GATEWAY_RESPONSE_TYPES.filter((x) => !x.startsWith('DEFAULT_')).sort(),
      );
      const responses = new Map(
        resourcesOf(t(), 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [r.Properties.ResponseType, r.Properties]),
      );
      for (const type of GATEWAY_RESPONSE_TYPES) {
        const r = responses.get(type);
        expect(r, type).toBeDefined();
        const status = Number(r!.StatusCode);
        const body = JSON.parse(r!.ResponseTemplates['application/json']) as { code: ErrorCode; status: number };
        expect(body.status, type).toBe(status);
        // A code the authorizer's Deny gives is one of those its spec names, each of this status.
        const codeFrom = GATEWAY_RESPONSES.find((g) => g.type === type)?.codeFrom;
        if (codeFrom) expect(body.code, type).toBe(`$context.authorizer.${codeFrom.key}`);
        for (const code of codeFrom?.codes ?? [body.code]) expect(ERROR_CODES[code].status, type).toBe(status);
        const aws = AWS_DEFAULT_STATUS[type];
        if (aws === undefined) continue;
        // 4xx types keep AWS's status (an unknown route is the spec's 404); 5xx types may become 503 (retryable).
        if (type === 'MISSING_AUTHENTICATION_TOKEN') expect(status).toBe(404);
        // The authorizer denies only banned keys and spent days: the spec's 429 for a key over its limits.
        else if (type === 'ACCESS_DENIED') expect(status).toBe(429);
        else if (aws >= 500) expect(status >= 500 && status < 600, type).toBe(true);
        else expect(status, type).toBe(aws);
      }
    });

    // "Method request behavior for payloads without mapping templates": WHEN_NO_MATCH passes an unmapped body to the
    // integration untransformed; a MOCK integration then finds no statusCode and fails (500 → DEFAULT_5XX, a 503
    // that clients retry). NEVER answers an unmapped content type with UNSUPPORTED_MEDIA_TYPE (415) instead.
    it('MOCK methods never pass a request body through to the mock', () => {
      const mocks = resourcesOf(t(), 'AWS::ApiGateway::Method').filter(
        ([, m]) => m.Properties.Integration?.Type === 'MOCK',
      );
      expect(mocks.length).toBeGreaterThan(0);
      for (const [id, m] of mocks) {
        const i = m.Properties.Integration;
        expect(i.PassthroughBehavior, id).toBe('NEVER');
        // API Gateway uses application/json for a request without Content-Type.
        expect(Object.keys(i.RequestTemplates), id).toContain('application/json');
        for (const template of Object.values(i.RequestTemplates))
          expect(JSON.parse(template as string)).toEqual({ statusCode: 200 });
      }
    });

    // One usage plan per plan, each holding its plan's one API key: the key the authorizer names for every key of the
    // plan. Its figures are the capacity model's (planThrottles), within the account throttle ("Amazon API Gateway
    // quotas": per-client limits cannot exceed it), and no quota: a spent day is the authorizer's Deny.
    it('one usage plan per plan, each with its one API key, sized by the capacity model', () => {
      const plans = resourcesOf(t(), 'AWS::ApiGateway::UsagePlan');
      const keys = resourcesOf(t(), 'AWS::ApiGateway::ApiKey');
      const planKeys = resourcesOf(t(), 'AWS::ApiGateway::UsagePlanKey');
      expect(plans).toHaveLength(PLAN_NAMES.length);
      expect(keys).toHaveLength(PLAN_NAMES.length);
      expect(planKeys).toHaveLength(PLAN_NAMES.length);
      const throttles = planThrottles(STAGES[stageName]);
      for (const name of PLAN_NAMES) {
        const [planId, p] = plans.find(([, x]) => x.Properties.UsagePlanName.endsWith(`-${PLANS[name].displayName}`))!;
        expect(p.Properties.Quota, name).toBeUndefined();
        expect(p.Properties.Throttle, name).toEqual({
          RateLimit: throttles[name].rateLimit,
          BurstLimit: throttles[name].burstLimit,
        });
        expect(p.Properties.Throttle.BurstLimit, name).toBeLessThanOrEqual(ACCOUNT_THROTTLE.burstLimit);
        expect(p.Properties.Throttle.RateLimit, name).toBeLessThanOrEqual(ACCOUNT_THROTTLE.rateLimit);
        const onPlan = planKeys.filter(([, k]) => k.Properties.UsagePlanId.Ref === planId);
        expect(onPlan, name).toHaveLength(1);
        const [, key] = keys.find(([id]) => id === onPlan[0]![1].Properties.KeyId.Ref)!;
        expect(key.Properties.Value, name).toBe(planUsageKeyValue(stageName, name));
      }
    });
  });
});
