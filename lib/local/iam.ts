/**
 * Each local function's DynamoDB calls checked against the role the synthesized template gives that function, as
 * IAM checks them in AWS: a call whose action or resource (table, index) no statement of the role allows, or that
 * a statement denies, fails with `AccessDeniedException` before it reaches DynamoDB Local, and the function answers
 * what it would answer in AWS. So nothing local can do what the deployed function cannot: a missing grant shows up
 * in `npm start` and `npm test`, not first in production.
 *
 * What the emulation understands (docs/deployment.md, "Checked before a deploy"): identity policies on the
 * function's role (AWS::IAM::Policy resources attached to it and the role's inline `Policies`), statements with
 * `Effect` Allow or Deny, `Action` and `Resource` as a string or a list with `*` and `?` wildcards, resources given
 * as strings or CloudFormation intrinsics that resolve to local values (`Ref`, `Fn::Join`, a table's
 * `Fn::GetAtt … Arn`). Anything else that could bear on a DynamoDB call (`NotAction`, `NotResource`, `Condition`,
 * managed policies, a permissions boundary) is refused at start-up, loudly, rather than allowed.
 */
import { DynamoDBServiceException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LOCAL_ACCOUNT, resolver, tableArn, type LocalValues } from './intrinsics.ts';
import type { CfnTemplate, FunctionDef } from './template.ts';

/** One statement, resolved to local ARNs. */
interface Statement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly RegExp[];
  readonly resources: readonly RegExp[];
}

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

const KNOWN_KEYS = new Set(['Sid', 'Effect', 'Action', 'Resource']);

/** `dynamodb:Get*` → a regex; actions compare case-insensitively, resources exactly, as IAM does. */
const pattern = (glob: string, flags: string): RegExp =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    flags,
  );

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
const mayMatchDynamo = (action: string): boolean => DYNAMO_ACTIONS.some((a) => pattern(action, 'i').test(a));

/** The policy statements of `fn`'s role in the template, resolved to local ARNs. */
export function rolePolicy(t: CfnTemplate, fn: FunctionDef, local: LocalValues): RolePolicy {
  const roleRef = t.Resources[fn.logicalId]?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
  const roleId = roleRef?.['Fn::GetAtt']?.[0];
  const role = roleId ? t.Resources[roleId] : undefined;
  const where = `the IAM emulation (function ${fn.logicalId}, role ${roleId ?? '?'})`;
  if (!roleId || role?.Type !== 'AWS::IAM::Role')
    throw new Error(`${where}: the function's role is not a role of this template`);
  for (const unsupported of ['ManagedPolicyArns', 'PermissionsBoundary'])
    if (role.Properties?.[unsupported] !== undefined)
      throw new Error(`${where}: ${unsupported} is not emulated; refusing rather than allowing what it might deny`);
  const documents: unknown[] = [
    ...(role.Properties?.Policies ?? []).map((p: { PolicyDocument: unknown }) => p.PolicyDocument),
    ...Object.values(t.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => (r.Properties?.Roles ?? []).some((x: { Ref?: string }) => x.Ref === roleId))
      .map((r) => r.Properties!.PolicyDocument),
  ];
  const resolve = resolver(t, local);
  const statements: Statement[] = [];
  for (const doc of documents) {
    for (const s of [(doc as { Statement: unknown }).Statement].flat() as Record<string, unknown>[]) {
      const actions = [s.Action ?? []].flat().map(String);
      const relevant = actions.some(mayMatchDynamo) || s.NotAction !== undefined;
      if (!relevant) continue;
      const unknown = Object.keys(s).filter((k) => !KNOWN_KEYS.has(k));
      if (unknown.length)
        throw new Error(`${where}: ${unknown.join(', ')} in a statement is not emulated (${JSON.stringify(s)})`);
      if (s.Effect !== 'Allow' && s.Effect !== 'Deny') throw new Error(`${where}: Effect ${String(s.Effect)}`);
      statements.push({
        effect: s.Effect,
        actions: actions.map((a) => pattern(a, 'i')),
        resources: [s.Resource].flat().map((r) => pattern(resolve(r), '')),
      });
    }
  }
  const matches = (s: Statement, r: AccessRequest) =>
    s.actions.some((a) => a.test(r.action)) && s.resources.some((p) => p.test(r.resource));
  return {
    role: roleId,
    decide(r) {
      // An explicit Deny wins over any Allow; with neither, the call is denied implicitly.
      if (statements.some((s) => s.effect === 'Deny' && matches(s, r))) return 'deny';
      return statements.some((s) => s.effect === 'Allow' && matches(s, r)) ? 'allow' : 'deny';
    },
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
