import { Stack } from 'aws-cdk-lib';
import { ServicePrincipal, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/**
 * An AWS service as the principal of a role's trust, only on behalf of this account (`aws:SourceAccount`): the
 * cross-service confused-deputy guard, so another account's resource of that service cannot have it assume the role.
 * `sourceArn` narrows it to the resources that may (ArnLike) where the service sends aws:SourceArn on AssumeRole.
 * (A Lambda permission for API Gateway names its execute-api SourceArn instead, which holds the account.)
 */
export function servicePrincipalOf(scope: Construct, service: string, sourceArn?: string): IPrincipal {
  return new ServicePrincipal(service).withConditions({
    StringEquals: { 'aws:SourceAccount': Stack.of(scope).account },
    ...(sourceArn === undefined ? {} : { ArnLike: { 'aws:SourceArn': sourceArn } }),
  });
}
