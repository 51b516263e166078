import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';

export interface WebFirewallProps {
  /** The REST API stage the web ACL protects. */
  readonly stage: Stage;
  /** Requests one client IP may send in any 5-minute window before WAF blocks it (AWS: 10 to 2,000,000,000). */
  readonly requestsPerIpPer5Minutes: number;
}

/**
 * A WAFv2 web ACL (scope REGIONAL: REST API stages take regional ACLs only) with one rate-based rule per client IP,
 * associated with the stage. It stops a single source's flood of random bearer tokens before API Gateway runs the
 * authorizer (every such token misses the authorizer cache: one Lambda invocation and one DynamoDB read each). A
 * blocked request gets API Gateway's WAF_FILTERED gateway response: 403 with the spec's Error object (`forbidden`).
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
    this.webAcl = new CfnWebACL(this, 'Acl', {
      name,
      scope: 'REGIONAL',
      description: `${name}: per-IP rate limit in front of the API`,
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`${name}-acl`),
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
            },
          },
          visibilityConfig: visibility(`${name}-rate-per-ip`),
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
