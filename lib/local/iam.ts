/**
 * Each local function's DynamoDB calls checked against its role in the synthesized template, as IAM would. A call
 * no statement allows, or one denies, fails with `AccessDeniedException` before reaching DynamoDB Local. So a
 * missing grant shows up in `npm start` and `npm test`, not first in production.
 * Understood (docs/deployment.md, "Checked before a deploy"): every policy attached to the role (role-policies.ts),
 * evaluated as IAM does (policy.ts: Allow, Deny, NotAction, NotResource, wildcards), intrinsics resolved locally.
 * Anything else that could bear on a call (a `Condition`, a managed policy outside the template, a permissions
 * boundary, an unknown role name) is refused at start-up, loudly, rather than allowed.
 */
import { DynamoDBServiceException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LOCAL_ACCOUNT, resolver, tableArn, type LocalValues } from './intrinsics.ts';
import { evaluate, globMatches, readStatements, type Statement } from './policy.ts';
import { attachedDocuments } from './role-policies.ts';
import type { CfnTemplate, FunctionDef } from './template.ts';

/** What a DynamoDB call asks IAM for: one action on one resource (a batch or transaction asks several). */
export interface AccessRequest {
  readonly action: string;
  readonly resource: string;
}

export interface RolePolicy {
  /** The role's name in the template (for messages). */
  readonly role: string;
  decide(request: AccessRequest): 'allow' | 'deny';
}

/** Every action accessRequests asks for: a statement none of whose actions matches one cannot bear on our calls. */
const DYNAMO_ACTIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'ConditionCheckItem',
  'DescribeTable',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
].map((a) => `dynamodb:${a}`);
const mayMatchDynamo = (action: string): boolean => DYNAMO_ACTIONS.some((a) => globMatches(action, a, true));

/**
 * A table's resource-based policy also decides its calls (an explicit Deny there refuses what the role allows), and
 * the emulation does not evaluate one: a template with any is refused at start, loudly, never served as if allowed.
 */
export function refuseTableResourcePolicies(t: CfnTemplate): void {
  for (const [id, r] of Object.entries(t.Resources)) {
    const policies =
      r.Type === 'AWS::DynamoDB::Table'
        ? [r.Properties?.ResourcePolicy]
        : r.Type === 'AWS::DynamoDB::GlobalTable'
          ? ((r.Properties?.Replicas as { ResourcePolicy?: unknown }[] | undefined) ?? []).map((x) => x.ResourcePolicy)
          : [];
    if (policies.some((p) => p !== undefined))
      throw new Error(
        `the IAM emulation (table ${id}): a table resource policy (ResourcePolicy) is not evaluated locally; refusing rather than allowing what it might deny`,
      );
  }
}

/** The policy statements of `fn`'s role in the template, resolved to local ARNs. */
export function rolePolicy(t: CfnTemplate, fn: FunctionDef, local: LocalValues): RolePolicy {
  refuseTableResourcePolicies(t);
  const roleRef = t.Resources[fn.logicalId]?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
  const roleId = roleRef?.['Fn::GetAtt']?.[0];
  const role = roleId ? t.Resources[roleId] : undefined;
  const where = `the IAM emulation (function ${fn.logicalId}, role ${roleId ?? '?'})`;
  if (!roleId || role?.Type !== 'AWS::IAM::Role')
    throw new Error(`${where}: the function's role is not a role of this template`);
  const resolve = resolver(t, local);
  const statements: Statement[] = [];
  let documents;
  try {
    documents = attachedDocuments(t, roleId);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`, { cause: e });
  }
  for (const { source, document } of documents) {
    // Only statements that can bear on a DynamoDB call are read (and must resolve locally): a log group's ARN need not.
    const relevant = [(document as { Statement?: unknown }).Statement].flat().filter((raw) => {
      const s = raw as Record<string, unknown>;
      return s.NotAction !== undefined || [s.Action ?? []].flat().map(String).some(mayMatchDynamo);
    }) as Record<string, unknown>[];
    for (const s of relevant)
      if (s.Condition !== undefined)
        throw new Error(
          `${where}: Condition in a statement of ${source} is not emulated (a local call carries no request context) (${JSON.stringify(s)})`,
        );
    statements.push(...readStatements({ Statement: relevant }, resolve, `${where}, ${source}`));
  }
  return {
    role: roleId,
    // An explicit Deny wins over any Allow; with neither, the call is denied implicitly.
    decide: (r) => (evaluate(statements, r) === 'allow' ? 'allow' : 'deny'),
  };
}

type Input = Record<string, any>;
const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};
const SINGLE_TABLE = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'DescribeTable']);

/** What one DynamoDB command asks IAM for, as the service authorizes it (per table, or per index for reads). */
export function accessRequests(commandName: string, input: Input): AccessRequest[] {
  const op = commandName.replace(/Command$/, '');
  if (SINGLE_TABLE.has(op)) return [{ action: `dynamodb:${op}`, resource: tableArn(input.TableName) }];
  if (op === 'Query' || op === 'Scan') {
    const table = tableArn(input.TableName);
    return [{ action: `dynamodb:${op}`, resource: input.IndexName ? `${table}/index/${input.IndexName}` : table }];
  }
  if (op === 'BatchGetItem' || op === 'BatchWriteItem')
    return Object.keys(input.RequestItems ?? {}).map((t) => ({ action: `dynamodb:${op}`, resource: tableArn(t) }));
  // A transaction has no action of its own: IAM authorizes each item as the single-item operation it is.
  if (op === 'TransactWriteItems' || op === 'TransactGetItems')
    return (input.TransactItems as Input[]).map((item) => {
      const [kind, body] = Object.entries(item)[0]!;
      const action = TRANSACT_ACTIONS[kind];
      if (!action) throw new Error(`the IAM emulation does not know the transaction item ${kind}`);
      return { action: `dynamodb:${action}`, resource: tableArn((body as Input).TableName) };
    });
  throw new Error(`the IAM emulation does not know what ${commandName} asks IAM for; add it to lib/local/iam.ts`);
}

/** What AWS answers a call the role does not allow (an unmodeled client error: the SDK does not retry it). */
function accessDenied(policy: RolePolicy, fn: FunctionDef, r: AccessRequest): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name: 'AccessDeniedException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: `User: arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${policy.role}/${fn.logicalId} is not authorized to perform: ${r.action} on resource: ${r.resource} because no identity-based policy allows the ${r.action} action`,
  });
}

/** Checks every call `client` sends (and every document client built on it) against the function's role. */
export function enforceRole(
  client: Pick<DynamoDBClient, 'middlewareStack'>,
  fn: FunctionDef,
  policy: RolePolicy,
): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      for (const r of accessRequests(String(context.commandName), args.input as Input))
        if (policy.decide(r) !== 'allow') throw accessDenied(policy, fn, r);
      return next(args);
    },
    { step: 'initialize', priority: 'high', name: 'localIamEmulation' },
  );
}
