/**
 * The DynamoDB tables a stack holds, read for the walk-back of a failed create and for preflight's finding that
 * names it: the stack's resources through ListStackResources (every page: DescribeStackResources stops at 100, and
 * the stack has more than 250), each table through DescribeTable.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CloudFormationSend } from './deployed.ts';

/** The DynamoDB calls the walk-back makes: a client, or one pointed at DynamoDB Local in tests. */
export type DynamoDBSend = Pick<DynamoDBClient, 'send'>;

/** Every table of the stack not deleted yet, by name (a rollback that deleted one marks it DELETE_COMPLETE). */
export async function listStackTables(cfn: CloudFormationSend, stackName: string): Promise<string[]> {
  const { ListStackResourcesCommand } = await import('@aws-sdk/client-cloudformation');
  const names: string[] = [];
  let NextToken: string | undefined;
  do {
    const page = await cfn.send(new ListStackResourcesCommand({ StackName: stackName, NextToken }));
    for (const r of page.StackResourceSummaries ?? [])
      if (
        r.ResourceType?.startsWith('AWS::DynamoDB::') &&
        r.PhysicalResourceId &&
        r.ResourceStatus !== 'DELETE_COMPLETE'
      )
        names.push(r.PhysicalResourceId);
    NextToken = page.NextToken;
  } while (NextToken);
  return names;
}

/** A table as DescribeTable answers: gone (ResourceNotFoundException), or its status and deletion protection. */
export type TableState =
  { readonly gone: true } | { readonly gone: false; readonly status: string; readonly deletionProtection: boolean };

export async function readTable(ddb: DynamoDBSend, tableName: string): Promise<TableState> {
  const { DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
  try {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
    return {
      gone: false,
      status: Table?.TableStatus ?? 'UNKNOWN',
      deletionProtection: !!Table?.DeletionProtectionEnabled,
    };
  } catch (e) {
    if ((e as Error).name === 'ResourceNotFoundException') return { gone: true };
    throw e;
  }
}

/** Whether the table holds any item (one strongly consistent read of at most one item). */
export async function holdsItems(ddb: DynamoDBSend, tableName: string): Promise<boolean> {
  const { ScanCommand } = await import('@aws-sdk/client-dynamodb');
  const got = await ddb.send(
    new ScanCommand({ TableName: tableName, Limit: 1, Select: 'COUNT', ConsistentRead: true }),
  );
  return (got.Count ?? 0) > 0 || got.LastEvaluatedKey !== undefined;
}

/** The stack's tables that still have deletion protection on, for preflight's finding. */
export async function tablesStillProtected(
  cfn: CloudFormationSend,
  ddb: DynamoDBSend,
  stackName: string,
): Promise<string[]> {
  const protectedOn: string[] = [];
  for (const name of await listStackTables(cfn, stackName)) {
    const table = await readTable(ddb, name);
    if (!table.gone && table.deletionProtection) protectedOn.push(name);
  }
  return protectedOn;
}
