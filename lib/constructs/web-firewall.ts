import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnIPSet, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { keyFormExpression } from '../../contract/auth.ts';
import {
  GATEWAY_RESPONSES,
  type GatewayResponseSpec,
  type GatewayResponseType,
} from '../../contract/gateway-responses.ts';
import { BASE_PATH, ROUTES } from '../../contract/routes.ts';
import { MAX_BODY_BYTES } from '../../contract/schemas.ts';
import { errorBodyTemplate } from './gateway-responses.ts';
import { pinLogicalId } from './logical-ids.ts';

export interface WebFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: Stage;
  /** Requests one address not on `customerEgress` may send in any 5-minute window, whatever they carry. */
  readonly requestsPerIpPer5Minutes: number;
  /** Requests one bearer key (the whole Authorization header) may send in any 5-minute window from such addresses. */
  readonly requestsPerKeyPer5Minutes: number;
  /** Requests one address on `customerEgress` may send in any 5-minute window. */
  readonly listedRequestsPer5Minutes: number;
  /** Customers' egress addresses (IPv4 CIDR blocks): they get `listedRequestsPer5Minutes`. May be empty. */
  readonly customerEgress: readonly string[];
  /** Whether keys of the old form are still looked up: WAF passes that form only then. */
  readonly oldKeyForm: 'accepted' | 'refused';
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

/** An Authorization header carrying a key of a form the stage accepts. */
const keyShaped = (oldForm: WebFirewallProps['oldKeyForm']): CfnWebACL.StatementProperty => ({
  regexMatchStatement: {
    fieldToMatch: header(SECRET_HEADER),
    regexString: keyFormExpression(oldForm),
    textTransformations: NONE,
  },
});

/** How long WAF counts a source's requests: a source blocked for its rate is let through this long after it stops. */
const RATE_WINDOW_SECONDS = 300;

/**
 * WAF's Block with the same answer the gateway would give (contract/gateway-responses.ts): a WAF custom response
 * takes precedence over the protected resource's own, so without it a WAF block would be the gateway's
 * WAF_FILTERED 403 where the spec wants 401, 413 or 429. WAF sets the content type from the body (APPLICATION_JSON).
 */
function answerAs(type: GatewayResponseType) {
  return answer(
    type.toLowerCase().replace(/_/g, '-'),
    GATEWAY_RESPONSES.find((g) => g.type === type)!,
  );
}

/**
 * A source over its rate: the spec's answer to a request over a limit, 429 `rate_limited`, as the gateway's own
 * throttle gives it (nothing counted on the key), with the wait after which WAF's window holds none of its requests.
 */
function rateLimitedAtEdge() {
  const throttled = GATEWAY_RESPONSES.find((g) => g.type === 'THROTTLED')!;
  return answer('rate-limited-by-source', {
    ...throttled,
    message: `Too many requests from this address or key: wait ${RATE_WINDOW_SECONDS} seconds, then back off.`,
    headers: { ...throttled.headers, 'Retry-After': String(RATE_WINDOW_SECONDS) },
  });
}

function answer(
  key: string,
  r: Pick<GatewayResponseSpec, 'code' | 'message' | 'codeFrom' | 'status' | 'headers'>,
): {
  key: string;
  body: CfnWebACL.CustomResponseBodyProperty;
  action: CfnWebACL.RuleActionProperty;
} {
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
 * A WAFv2 web ACL on the stage (REGIONAL: REST API stages take regional ACLs only). Its blocks cost no stage throttle,
 * no authorizer run and no DynamoDB read. Each rule and its figure: docs/keys-and-limits.md, "Guards against floods".
 * WAF stops at the first terminating rule, so the rate rules come first and count every request, malformed and
 * oversize too. Blocked requests keep counting, so a source that keeps flooding stays blocked.
 * `RatePerKey` lower-cases the header (the scheme is case-insensitive); WAF skips requests without it.
 * MAX_BODY_BYTES is also WAF's inspection limit for regional resources: a larger body is "oversize", matched.
 * Data protection replaces the Authorization header wherever WAF keeps a request (samples, logs, match details), so
 * WAF never holds a plaintext key.
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
    const egress = new CfnIPSet(this, 'CustomerEgress', {
      name: `${name}-customer-egress`,
      scope: 'REGIONAL',
      ipAddressVersion: 'IPV4',
      addresses: [...props.customerEgress],
      description: `${name}: customer egress addresses, each allowed the largest contract`,
    });
    pinLogicalId(egress, 'CustomerEgressIpSet');
    const listed: CfnWebACL.StatementProperty = { ipSetReferenceStatement: { arn: egress.attrArn } };
    const tooLarge = answerAs('REQUEST_TOO_LARGE');
    const limited = rateLimitedAtEdge();
    this.webAcl = new CfnWebACL(this, 'Acl', {
      name,
      scope: 'REGIONAL',
      description: `${name}: rate limits per address and per key, IP reputation, tokens of no key form, oversize bodies`,
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
      customResponseBodies: {
        [unauthorized.key]: unauthorized.body,
        [tooLarge.key]: tooLarge.body,
        [limited.key]: limited.body,
      },
      rules: [
        {
          name: 'RatePerListedIp',
          priority: 0,
          action: limited.action,
          statement: {
            rateBasedStatement: {
              limit: props.listedRequestsPer5Minutes,
              aggregateKeyType: 'IP',
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              scopeDownStatement: listed,
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-listed-ip`),
        },
        {
          name: 'RatePerIp',
          priority: 1,
          action: limited.action,
          statement: {
            rateBasedStatement: {
              limit: props.requestsPerIpPer5Minutes,
              aggregateKeyType: 'IP',
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              scopeDownStatement: { notStatement: { statement: listed } },
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-ip`),
        },
        {
          name: 'RatePerKey',
          priority: 2,
          action: limited.action,
          statement: {
            rateBasedStatement: {
              limit: props.requestsPerKeyPer5Minutes,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: SECRET_HEADER, textTransformations: LOWERCASE } }],
              evaluationWindowSec: RATE_WINDOW_SECONDS,
              scopeDownStatement: { notStatement: { statement: listed } },
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-key`),
        },
        {
          name: 'IpReputation',
          priority: 3,
          overrideAction: { none: {} },
          statement: { managedRuleGroupStatement: { vendorName: 'AWS', name: IP_REPUTATION_RULE_GROUP } },
          visibilityConfig: visibility(`${name}-ip-reputation`),
        },
        {
          name: 'MalformedAuthorization',
          priority: 4,
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
                { notStatement: { statement: keyShaped(props.oldKeyForm) } },
              ],
            },
          },
          visibilityConfig: visibility(`${name}-malformed-authorization`),
        },
        {
          name: 'BodyTooLarge',
          priority: 5,
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
