import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role } from 'aws-cdk-lib/aws-iam';
import { servicePrincipalOf } from './service-principal.ts';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';

/**
 * The account-wide API Gateway setting every stage's access and execution logs need: the CloudWatch Logs role of
 * AWS::ApiGateway::Account. There is one per account and Region, so it lives in its own stack: a stage stack that
 * set it would overwrite whatever role another application of the account configured, and two stages deploying it
 * at once would hit UpdateAccount's limit of one call per 20 seconds per account. The role and the setting are
 * retained (except when their first create rolls back): removing them would break the logging of every API in
 * the account.
 */
export class ApiGatewayAccount extends Construct {
  readonly role: Role;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.role = new Role(this, 'CloudWatchRole', {
      assumedBy: servicePrincipalOf(this, 'apigateway.amazonaws.com'),
      description: 'API Gateway writes access and execution logs of every API in this account and Region',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    this.role.applyRemovalPolicy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
    pinLogicalId(this.role, 'ApiGatewayCloudWatchRole');
    const account = new CfnAccount(this, 'Account', { cloudWatchRoleArn: this.role.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
    pinLogicalId(account, 'ApiGatewayAccount');
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-level role API Gateway needs to write access and execution logs; AWS documents this managed policy for it and it grants only CloudWatch Logs writes.',
    });
  }
}
