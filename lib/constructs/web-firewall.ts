import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { BEARER_VALIDATION_EXPRESSION } from '../../contract/auth.ts';
import { GATEWAY_RESPONSES, type GatewayResponseType } from '../../contract/gateway-responses.ts';
import { BASE_PATH, ROUTES } from '../../contract/routes.ts';
import { MAX_BODY_BYTES } from '../../contract/schemas.ts';
import { errorBodyTemplate } from './gateway-responses.ts';
import { pinLogicalId } from './logical-ids.ts';

export interface WebFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: Stage;
  /**
   * Requests without a bearer key (absent, or not of a key's shape) one client IP may send in any 5-minute window
   * before WAF blocks that IP's such requests (AWS: 10 to 2,000,000,000).
   */
  readonly requestsPerIpPer5Minutes: number;
  /** Requests one bearer key (the whole Authorization header) may send in any 5-minute window. */
  readonly requestsPerKeyPer5Minutes: number;
}

/** The header WAF must never keep a copy of: it carries the customer's plaintext key. */
export const SECRET_HEADER = 'authorization';

const NONE = [{ priority: 0, type: 'NONE' }];
/**
 * The per-key rule's transformation: `Bearer`, `bearer` and `BEARER` (RFC 9110: the scheme is case-insensitive) are
 * one key, not 64 buckets of it. The key's own characters fold too, so two keys that differ only in case share a
 * bucket: random 32-byte keys never do.
 */
const LOWERCASE = [{ priority: 0, type: 'LOWERCASE' }];
/**
 * AWS's IP reputation list (Amazon threat intelligence: bots, scanners, sources of DDoS), a managed rule group of
 * 25 WCU at no charge beyond a rule's: a botnet's forged tokens from listed addresses stop here.
 */
export const IP_REPUTATION_RULE_GROUP = 'AWSManagedRulesAmazonIpReputationList';
// SingleHeader is untyped JSON in the L1 (CDK passes it through as is): CloudFormation's own spelling.
const header = (name: string) => ({ singleHeader: { Name: name } });

/** An Authorization header the gateway's TOKEN authorizer would pass on: a bearer key's shape. */
const bearerShaped = (): CfnWebACL.StatementProperty => ({
  regexMatchStatement: {
    fieldToMatch: header(SECRET_HEADER),
    regexString: BEARER_VALIDATION_EXPRESSION,
    textTransformations: NONE,
  },
});

/**
 * WAF's Block with the same answer the gateway would give (contract/gateway-responses.ts): a WAF custom response
 * takes precedence over the protected resource's own, so without it a WAF block would be the gateway's
 * WAF_FILTERED 403 where the spec wants 401 or 413. WAF sets the content type from the body (APPLICATION_JSON).
 */
function answerAs(type: GatewayResponseType): {
  key: string;
  body: CfnWebACL.CustomResponseBodyProperty;
  action: CfnWebACL.RuleActionProperty;
} {
  const r = GATEWAY_RESPONSES.find((g) => g.type === type)!;
  const key = type.toLowerCase().replace(/_/g, '-');
  return {
    key,
    body: { contentType: 'APPLICATION_JSON', content: errorBodyTemplate(r) },
    action: {
      block: {
        customResponse: {
          responseCode: r.status,
          customResponseBodyKey: key,
          responseHeaders: Object.entries(r.headers)
            .filter(([name]) => name.toLowerCase() !== 'content-type')
            .map(([name, value]) => ({ name, value })),
        },
      },
    },
  };
}

/**
 * The operations' requests, by method and path (stage prefix included, as WAF sees the URI): the only requests
 * the authorizer runs for. Anything else (an unknown path's 404, a method's 405) is answered by the gateway
 * before authentication, and WAF leaves it to it whatever Authorization it carries.
 */
function operationRequests(): CfnWebACL.StatementProperty {
  const statements = ROUTES.map((r) => ({
    andStatement: {
      statements: [
        {
          byteMatchStatement: {
            fieldToMatch: { method: {} },
            positionalConstraint: 'EXACTLY',
            searchString: r.method,
            textTransformations: NONE,
          },
        },
        {
          regexMatchStatement: {
            fieldToMatch: { uriPath: {} },
            regexString: `^${BASE_PATH}${r.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`,
            textTransformations: NONE,
          },
        },
      ],
    },
  }));
  return statements.length === 1 ? statements[0]! : { orStatement: { statements } };
}

/**
 * A WAFv2 web ACL (scope REGIONAL: REST API stages take regional ACLs only), associated with the stage, in front of
 * the gateway: its blocks cost no stage throttle, no authorizer run and no DynamoDB read. WAF stops at the first
 * rule whose action terminates, so the rate rules come first (a rate rule under its limit lets evaluation go on):
 * every request is counted per IP and per key, the malformed and the oversize ones too, so a flood of those is
 * blocked by source like any other instead of costing WAF's fee and an access-log line each for ever.
 * - `RatePerIp` (priority 0): a flood of requests carrying no bearer key from one address. It counts only requests
 *   whose Authorization is absent or not of a key's shape (a scope-down statement), so it never counts, and never
 *   blocks, a customer: one address may carry any number of customers' contracts (a NAT, a fleet's egress), and a
 *   per-IP limit low enough to stop a flood refused an Enterprise customer far inside its contract.
 * - `RatePerKey` (priority 1): a flood on one key from many sources, at the largest contract the admin tool sells
 *   (WAF cannot tell a key's plan: lib/config/capacity.ts), so it refuses no key inside its contract. It reads the
 *   Authorization header lower-cased (LOWERCASE). A request without Authorization is not counted by the key rule
 *   (WAF skips requests missing an aggregation key). Both answer WAF_FILTERED (403).
 * - `IpReputation` (2): AWS's managed IP reputation list.
 * - `MalformedAuthorization` (3): an operation's request whose Authorization is present but not a bearer key the
 *   gateway would pass (the TOKEN authorizer's own validation expression) gets the gateway's 401, earlier. A request
 *   without Authorization, and any request the gateway answers before authentication, is left alone.
 * - `BodyTooLarge` (4): a body over MAX_BODY_BYTES (the functions' limit, and WAF's inspection limit for regional
 *   resources: a larger body is "oversize", matched) gets the functions' 413 `payload_too_large` without invoking one.
 * Data protection: the Authorization header is replaced by a fixed string wherever WAF keeps a request (sampled
 * requests, and logs if logging is ever turned on), rule match and rate-based details included, so WAF never holds
 * a customer's plaintext key (its SHA-256 in DynamoDB stays the only copy).
 */
export class WebFirewall extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: WebFirewallProps) {
    super(scope, id);
    const name = Stack.of(this).stackName;
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const unauthorized = answerAs('UNAUTHORIZED');
    const tooLarge = answerAs('REQUEST_TOO_LARGE');
    this.webAcl = new CfnWebACL(this, 'Acl', {
      name,
      scope: 'REGIONAL',
      description: `${name}: per-IP and per-key rate limits, IP reputation, malformed keys and oversize bodies in front of the API`,
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`${name}-acl`),
      dataProtectionConfig: {
        dataProtections: [
          {
            field: { fieldType: 'SINGLE_HEADER', fieldKeys: [SECRET_HEADER] },
            action: 'SUBSTITUTION',
            excludeRateBasedDetails: false,
            excludeRuleMatchDetails: false,
          },
        ],
      },
      customResponseBodies: { [unauthorized.key]: unauthorized.body, [tooLarge.key]: tooLarge.body },
      rules: [
        {
          name: 'RatePerIp',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: props.requestsPerIpPer5Minutes,
              aggregateKeyType: 'IP',
              evaluationWindowSec: 300,
              scopeDownStatement: { notStatement: { statement: bearerShaped() } },
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-ip`),
        },
        {
          name: 'RatePerKey',
          priority: 1,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              limit: props.requestsPerKeyPer5Minutes,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: SECRET_HEADER, textTransformations: LOWERCASE } }],
              evaluationWindowSec: 300,
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-key`),
        },
        {
          name: 'IpReputation',
          priority: 2,
          overrideAction: { none: {} },
          statement: { managedRuleGroupStatement: { vendorName: 'AWS', name: IP_REPUTATION_RULE_GROUP } },
          visibilityConfig: visibility(`${name}-ip-reputation`),
        },
        {
          name: 'MalformedAuthorization',
          priority: 3,
          action: unauthorized.action,
          statement: {
            andStatement: {
              statements: [
                operationRequests(),
                {
                  sizeConstraintStatement: {
                    fieldToMatch: header(SECRET_HEADER),
                    comparisonOperator: 'GT',
                    size: 0,
                    textTransformations: NONE,
                  },
                },
                { notStatement: { statement: bearerShaped() } },
              ],
            },
          },
          visibilityConfig: visibility(`${name}-malformed-authorization`),
        },
        {
          name: 'BodyTooLarge',
          priority: 4,
          action: tooLarge.action,
          statement: {
            sizeConstraintStatement: {
              fieldToMatch: { body: { oversizeHandling: 'MATCH' } },
              comparisonOperator: 'GT',
              size: MAX_BODY_BYTES,
              textTransformations: NONE,
            },
          },
          visibilityConfig: visibility(`${name}-body-too-large`),
        },
      ],
    });
    pinLogicalId(this.webAcl, 'WebAcl');
    // WAF's ARN form for a REST API stage: arn:<partition>:apigateway:<region>::/restapis/<api-id>/stages/<stage>.
    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
