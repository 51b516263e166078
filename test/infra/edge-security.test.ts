/**
 * What the stack keeps of a request and what it accepts at its edge, read off both stages' templates: nowhere AWS keeps
 * request data (WAF sampled requests and logs, API Gateway access logs, execution logs and data trace) can hold the
 * Authorization header, so docs/keys-and-limits.md's "no plaintext key is stored, logged or put in API Gateway" holds
 * in AWS too; the access log is bounded, server-side and valid JSON whatever a request carries; WAF answers a malformed
 * key and an oversize body as the gateway would, earlier, and leaves the gateway's own 404/405 alone; TLS 1.2 or later
 * on every endpoint.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code, Function, Runtime } from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH, ROUTES } from '../../contract/routes.ts';
import { MAX_BODY_BYTES } from '../../contract/schemas.ts';
import { MAX_CUSTOM_LIMITS } from '../../contract/plans.ts';
import { LARGEST_STANDARD_LIMITS, fiveMinuteDemand } from '../../lib/config/capacity.ts';
import { STAGE_NAMES, STAGES, type StageName } from '../../lib/config/stages.ts';
import { StoreApi } from '../../lib/constructs/store-api.ts';
import { UNITS_PER_CALL, requestUnitCeiling } from '../../lib/constructs/data-tables.ts';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { resourcesOf, synthTemplates, type CfnTemplate } from './templates.ts';
import { firstMatch, type WafRequest } from './waf-eval.ts';

let templates = {} as Record<StageName, CfnTemplate>;
beforeAll(() => {
  templates = synthTemplates();
}, 240_000);

/** Every `$context.*` variable of an access-log format. */
const variablesOf = (format: string) => [...format.matchAll(/\$context\.[A-Za-z0-9_.]+/g)].map((m) => m[0]);

/**
 * Variables whose values API Gateway computes from its own state, each bounded (ids, numbers, enums, the
 * connection's IP, the template's resource path), with a typical value. Anything else (the raw path, the user agent,
 * the Host, a header, an authorizer's free text) a client can fill.
 */
const SERVER_SIDE: Record<string, string> = {
  '$context.requestId': 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  '$context.extendedRequestId': 'BQGojGxxxxxxxx=',
  '$context.requestTimeEpoch': '1767225600000',
  '$context.identity.sourceIp': '203.0.113.7',
  '$context.httpMethod': 'GET',
  // A route's template, parameters unfilled, as API Gateway logs it.
  '$context.resourcePath': ROUTES.at(-1)!.path,
  '$context.status': '401',
  '$context.responseLength': '120',
  '$context.responseLatency': '12',
  '$context.integration.latency': '-',
  '$context.authorizer.principalId': 'key_0123456789abcdef',
  '$context.identity.apiKeyId': 'abcdefghij',
  '$context.error.responseType': 'UNAUTHORIZED',
  '$context.waf.status': '200',
  '$context.xrayTraceId': 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1',
};

/** What a hostile client puts wherever it can: quotes, a backslash, a newline, and 10 KB. */
const HOSTILE = `"}\\\n{"x":"${'a"'.repeat(5_000)}`;

/** The line API Gateway writes: each variable replaced by its value, unescaped (as AWS does). */
const render = (format: string) =>
  format.replace(/\$context\.[A-Za-z0-9_.]+/g, (v) => (v in SERVER_SIDE ? SERVER_SIDE[v]! : HOSTILE));

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  const t = () => templates[stage];
  const webAcl = () => resourcesOf(t(), 'AWS::WAFv2::WebACL')[0]![1].Properties;
  const stageProps = () => resourcesOf(t(), 'AWS::ApiGateway::Stage')[0]![1].Properties;

  // AWS WAF keeps sampled requests (every header's value, allowed requests included) for about 3 hours and returns
  // them to anyone with wafv2:GetSampledRequests; logs, if turned on, keep them for good. Data protection replaces a
  // field's value before WAF stores it, rule match and rate-based details too unless they are excluded.
  it('WAF keeps no Authorization value: replaced in sampled requests, logs and match details', () => {
    const sampling = [webAcl().VisibilityConfig, ...webAcl().Rules.map((r: any) => r.VisibilityConfig)].some(
      (v: any) => v.SampledRequestsEnabled,
    );
    const protections = (webAcl().DataProtectionConfig?.DataProtections ?? []) as any[];
    const authorization = protections.find(
      (p) =>
        p.Field.FieldType === 'SINGLE_HEADER' &&
        (p.Field.FieldKeys ?? []).map((k: string) => k.toLowerCase()).includes('authorization'),
    );
    if (sampling || resourcesOf(t(), 'AWS::WAFv2::LoggingConfiguration').length) {
      expect(authorization, 'a data protection for the Authorization header').toBeDefined();
      expect(['SUBSTITUTION', 'HASH']).toContain(authorization.Action);
      expect(authorization.ExcludeRuleMatchDetails ?? false).toBe(false);
      expect(authorization.ExcludeRateBasedDetails ?? false).toBe(false);
    }
  });

  // Execution logs (ERROR or INFO) have authorization headers redacted by API Gateway ("Execution logging for REST
  // APIs"); data trace logs whole requests, headers included, so it must stay off on every method. The access log
  // can only hold what its format names.
  it('API Gateway logs no request header: no data trace on any method, an access log of server-side fields only', () => {
    const s = stageProps();
    expect(s.DataTraceEnabled ?? false).toBe(false);
    for (const m of s.MethodSettings ?? []) expect(m.DataTraceEnabled ?? false, JSON.stringify(m)).toBe(false);
    const format: string = s.AccessLogSetting.Format;
    const clientFilled = variablesOf(format).filter((v) => !(v in SERVER_SIDE));
    expect(clientFilled, 'access-log variables a client can fill').toEqual([]);
  });

  // API Gateway substitutes variables without escaping, and logs unauthenticated and WAF-blocked requests too.
  it('access-log lines stay valid JSON and small whatever the request holds', () => {
    const line = render(stageProps().AccessLogSetting.Format);
    expect(() => JSON.parse(line), line.slice(0, 200)).not.toThrow();
    expect(Buffer.byteLength(line)).toBeLessThan(1_024);
  });

  // API Gateway's default for a Regional API's execute-api endpoint is TLS_1_0.
  it('accepts TLS 1.2 or later on the execute-api endpoint and any custom domain', () => {
    const policies = [
      ...resourcesOf(t(), 'AWS::ApiGateway::RestApi').map(([, r]) => r.Properties.SecurityPolicy),
      ...resourcesOf(t(), 'AWS::ApiGateway::DomainName').map(([, r]) => r.Properties.SecurityPolicy),
    ];
    expect(policies.length).toBeGreaterThan(0);
    for (const p of policies) expect(p).toMatch(/^(TLS_1_2|SecurityPolicy_TLS1[23]_)/);
    expect(resourcesOf(t(), 'AWS::Lambda::Url')).toEqual([]);
  });

  // DynamoDB on-demand bills every request unit with no upper bound unless a table (and each index) sets a maximum
  // throughput: a ceiling on what a flood, a runaway client or a bug can cost per second.
  it('caps every table and index at a throughput the stage can never legitimately need more of', () => {
    const ceiling = requestUnitCeiling(STAGES[stage].stageThrottle, ROUTES.length);
    const tables = resourcesOf(t(), 'AWS::DynamoDB::GlobalTable');
    expect(tables.length).toBeGreaterThan(0);
    for (const [id, r] of tables) {
      const p = r.Properties;
      expect(p.WriteOnDemandThroughputSettings, id).toEqual({ MaxWriteRequestUnits: ceiling });
      for (const replica of p.Replicas) {
        expect(replica.ReadOnDemandThroughputSettings, id).toEqual({ MaxReadRequestUnits: ceiling });
        for (const ix of replica.GlobalSecondaryIndexes ?? [])
          expect(ix.ReadOnDemandThroughputSettings, `${id} ${ix.IndexName}`).toEqual({ MaxReadRequestUnits: ceiling });
      }
      for (const ix of p.GlobalSecondaryIndexes ?? [])
        expect(ix.WriteOnDemandThroughputSettings, `${id} ${ix.IndexName}`).toEqual({ MaxWriteRequestUnits: ceiling });
    }
    // Never below what the stage admits in a second (every method's rate), at the most units a call takes.
    const admitted = Math.min(STAGES[stage].stageThrottle.rateLimit * ROUTES.length, 10_000);
    expect(ceiling).toBeGreaterThanOrEqual(UNITS_PER_CALL * admitted);
  });

  describe('WAF answers as the gateway would, earlier', () => {
    const op = ROUTES[0]!;
    const path = `${BASE_PATH}${op.path.replace(/\{[^}]+\}/g, 'p-1')}`;
    const verdict = (req: WafRequest) => {
      const rule = firstMatch(webAcl(), req);
      if (!rule) return 'allow';
      const custom = rule.Action.Block?.CustomResponse;
      return custom ? custom.ResponseCode : 'blocked';
    };
    it('a present but malformed Authorization on an operation gets 401 with the Error object', () => {
      for (const bad of [
        'Bearer',
        'Basic dXNlcjpwYXNz',
        'Bearer short',
        `Bearer ${'x'.repeat(200)}`,
        'Bearer a"b'.padEnd(40, 'c'),
        // A bearer key's shape, but no form a key was issued in: it never costs the gateway a throttle token.
        `Bearer ${'x'.repeat(40)}`,
        `Bearer ask2_${'x'.repeat(48)}`,
      ])
        expect(verdict({ method: op.method, path, headers: { Authorization: bad } }), bad).toBe(401);
      const rule = firstMatch(webAcl(), { method: op.method, path, headers: { authorization: 'nope' } })!;
      const body = webAcl().CustomResponseBodies[rule.Action.Block.CustomResponse.CustomResponseBodyKey];
      expect(JSON.parse(body.Content)).toMatchObject({ code: 'unauthorized', status: 401 });
      const headers = rule.Action.Block.CustomResponse.ResponseHeaders.map((h: any) => h.Name);
      expect(headers).toContain('WWW-Authenticate');
    });
    it('lets well-formed keys, a missing Authorization, unknown paths and other methods through to the gateway', () => {
      expect(verdict({ method: op.method, path, headers: { Authorization: `Bearer ${generateKey()}` } })).toBe('allow');
      expect(verdict({ method: op.method, path, headers: { authorization: `bearer ask_${'A'.repeat(43)}` } })).toBe(
        'allow',
      );
      expect(verdict({ method: op.method, path })).toBe('allow');
      expect(verdict({ method: op.method, path: `${BASE_PATH}/nowhere`, headers: { Authorization: 'x' } })).toBe(
        'allow',
      );
      expect(verdict({ method: 'DELETE', path, headers: { Authorization: 'x' } })).toBe('allow');
      expect(verdict({ method: 'GET', path: '/', headers: { Authorization: 'x' } })).toBe('allow');
    });
    it('a body over MAX_BODY_BYTES gets 413 payload_too_large, one at the limit passes', () => {
      // A route that takes a body, by its declaration.
      const withBody = ROUTES.find((r) => r.request.body)!;
      const p = `${BASE_PATH}${withBody.path}`;
      const auth = { Authorization: `Bearer ${generateKey()}` };
      const { method } = withBody;
      expect(verdict({ method, path: p, headers: auth, body: 'x'.repeat(MAX_BODY_BYTES + 1) })).toBe(413);
      expect(verdict({ method, path: p, headers: auth, body: 'x'.repeat(MAX_BODY_BYTES) })).toBe('allow');
    });
    it('counts every request per address and per key, and a listed address at the largest contract sold', () => {
      const rules = webAcl().Rules as any[];
      const rate = (name: string) => rules.find((r) => r.Name === name)!.Statement.RateBasedStatement;
      const ipSet = resourcesOf(t(), 'AWS::WAFv2::IPSet')[0]!;
      const listed = { IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': [ipSet[0], 'Arn'] } } };
      expect(ipSet[1].Properties).toMatchObject({ Scope: 'REGIONAL', IPAddressVersion: 'IPV4', Addresses: [] });
      expect(rate('RatePerListedIp')).toMatchObject({
        AggregateKeyType: 'IP',
        Limit: STAGES[stage].wafListedRequestsPer5Minutes,
        ScopeDownStatement: listed,
      });
      // Every request from any other address counts, a bearer key's included: forged tokens are not exempt.
      expect(rate('RatePerIp')).toMatchObject({
        AggregateKeyType: 'IP',
        Limit: STAGES[stage].wafRequestsPerIpPer5Minutes,
        ScopeDownStatement: { NotStatement: { Statement: listed } },
      });
      const perKey = rate('RatePerKey');
      // Lower-cased: `Bearer`, `bearer` and `BEARER` are one key to the rule, not 64 buckets of it.
      expect(perKey.CustomKeys).toEqual([
        { Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'LOWERCASE' }] } },
      ]);
      expect(perKey.ScopeDownStatement).toEqual({ NotStatement: { Statement: listed } });
      // One Business key's contract and its fleet's 429s: no honest client needs more from one unlisted source.
      for (const limit of [perKey.Limit, rate('RatePerIp').Limit])
        expect(limit).toBe(fiveMinuteDemand(LARGEST_STANDARD_LIMITS));
      // The largest contract the admin tool sells, its fleet's 429s included, from a listed address.
      expect(rate('RatePerListedIp').Limit).toBeGreaterThanOrEqual(fiveMinuteDemand(MAX_CUSTOM_LIMITS));
      // Over a limit is the spec's 429 with Retry-After, the Error object and nothing counted on a key: the window's
      // length, after which WAF holds none of the source's requests.
      for (const name of ['RatePerListedIp', 'RatePerIp', 'RatePerKey']) {
        const custom = rules.find((r) => r.Name === name)!.Action.Block.CustomResponse;
        expect(custom.ResponseCode, name).toBe(429);
        const headers = Object.fromEntries(custom.ResponseHeaders.map((h: any) => [h.Name, h.Value]));
        expect(headers).toMatchObject({
          'Retry-After': String(rate(name).EvaluationWindowSec),
          'X-RateLimit-Limit': '0',
        });
        const body = JSON.parse(webAcl().CustomResponseBodies[custom.CustomResponseBodyKey].Content);
        expect(body).toMatchObject({ code: 'rate_limited', status: 429 });
      }
    });
    // WAF stops at the first terminating action; a rate rule under its limit does not stop it. Blocking rules
    // before the rate rules would leave every malformed or oversize request of a flood uncounted per IP and key.
    it('evaluates the rate rules first, then AWS’s IP reputation list, then the blocking rules', () => {
      const rules = [...(webAcl().Rules as any[])].sort((a, b) => a.Priority - b.Priority);
      expect(new Set(rules.map((r) => r.Priority)).size, 'priorities are unique').toBe(rules.length);
      expect(rules.map((r) => r.Name)).toEqual([
        'RatePerListedIp',
        'RatePerIp',
        'RatePerKey',
        'IpReputation',
        'MalformedAuthorization',
        'BodyTooLarge',
      ]);
      const firstOther = rules.findIndex((r) => !r.Statement.RateBasedStatement);
      expect(rules.slice(firstOther).some((r) => r.Statement.RateBasedStatement)).toBe(false);
      const managed = rules.find((r) => r.Statement.ManagedRuleGroupStatement)!;
      expect(managed.Statement.ManagedRuleGroupStatement).toEqual({
        VendorName: 'AWS',
        Name: 'AWSManagedRulesAmazonIpReputationList',
      });
      // A rule group takes an override action (None: its own rules' Block), never an action of its own.
      expect(managed.OverrideAction).toEqual({ None: {} });
      expect(managed.Action).toBeUndefined();
    });
  });
});

// No stage has a custom domain by default: one built the way a stage config would ask for it.
it('a custom domain also takes TLS 1.2 or later', () => {
  const stack = new Stack(new App(), 'Tls', { env: { account: '123456789012', region: 'eu-west-1' } });
  const fn = (id: string) =>
    new Function(stack, id, {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    });
  new StoreApi(stack, 'Api', {
    handlers: new Map(ROUTES.map((r) => [r.operationId, fn(r.operationId)])),
    authorizerHandler: fn('Authorizer'),
    customDomain: {
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
    },
    throttle: { rateLimit: 10, burstLimit: 10 },
    traceSampleRate: 0.01,
  });
  const t = Template.fromStack(stack).toJSON() as CfnTemplate;
  const policies = [
    ...resourcesOf(t, 'AWS::ApiGateway::RestApi'),
    ...resourcesOf(t, 'AWS::ApiGateway::DomainName'),
  ].map(([, r]) => r.Properties.SecurityPolicy);
  expect(policies).toHaveLength(2);
  for (const p of policies) expect(p).toMatch(/^(TLS_1_2|SecurityPolicy_TLS1[23]_)/);
});
