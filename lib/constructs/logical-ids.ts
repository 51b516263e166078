import type { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Gives a resource a fixed CloudFormation logical id. CloudFormation identifies a resource by its logical id: a
 * new id means "create the new one, delete the old one", so renaming a construct (or moving it to another parent)
 * would replace a table, a usage plan every API key is attached to, or the REST API clients call. Pinned ids make
 * such a refactor a no-op for CloudFormation; `test/infra/logical-ids.test.ts` lists them.
 */
export function pinLogicalId(construct: IConstruct, logicalId: string): void {
  const resource = (construct.node.defaultChild ?? construct) as CfnResource;
  resource.overrideLogicalId(logicalId);
}
