/**
 * Whether an Enterprise bracket's probation member exists at the gateway, as the data says: the admin tool makes a
 * bracket's usage plan and API keys (lib/admin/reconcile-pool.ts), and only after the probation member is on the
 * bracket's plan does it write this item (`bp#<bracket id>` in the state table, holding the member's API key value,
for an operator reading the table).
 * The authorizer names a bracket's probation member only when this item names it; otherwise it keeps counting the key
 * on its ordinary pool member (see probationUsageKey).
 *
 * The Free, Pro and Business pools' probation shards need no item: the stack makes them, in the same template as the
 * authorizer that names them (lib/constructs/usage-plans.ts), so the data that says they exist is the stack's.
 */
import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { enterpriseBracket } from '../../contract/brackets.ts';
import { gateUsageKey, type Authenticated, type GateDecision } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';

export const bracketProbationItemKey = (bracketId: string) => ({ pk: `bp#${bracketId}` });

/**
 * The probation member recorded for a bracket: its API key value, or undefined when none is recorded. A BatchGetItem
 * of one item because that is the one read the authorizer's role allows on the state table (contract/routes.ts).
 */
export async function readBracketProbation({ doc, tables }: Storage, bracketId: string): Promise<string | undefined> {
  const out = await guarded((options) =>
    doc.send(
      new BatchGetCommand({
        RequestItems: { [tables.state]: { Keys: [bracketProbationItemKey(bracketId)], ConsistentRead: true } },
      }),
      options,
    ),
  );
  if (out.UnprocessedKeys?.[tables.state]) throw new Error('bracket probation record unprocessed');
  const item = out.Responses?.[tables.state]?.[0] as { member?: unknown } | undefined;
  return typeof item?.member === 'string' ? item.member : undefined;
}

/** The same, as the admin tool reads it (its own credentials; a plain consistent read). */
export async function recordedBracketProbation(
  { doc, tables }: Storage,
  bracketId: string,
): Promise<string | undefined> {
  const out = await guarded(() =>
    doc.send(
      new GetCommand({ TableName: tables.state, Key: bracketProbationItemKey(bracketId), ConsistentRead: true }),
    ),
  );
  const member = (out.Item as { member?: unknown } | undefined)?.member;
  return typeof member === 'string' ? member : undefined;
}

/**
 * Records that the bracket's probation member (API key value `member`) is on the bracket's usage plan. Written only
 * after it is: the authorizer names the member from then on. A plain put: writing it again changes nothing.
 */
export async function recordBracketProbation(
  { doc, tables }: Storage,
  bracketId: string,
  member: string,
): Promise<void> {
  await guarded(() =>
    doc.send(new PutCommand({ TableName: tables.state, Item: { ...bracketProbationItemKey(bracketId), member } })),
  );
}

/**
 * The API key the gateway counts a request against (domain/keys.ts gateUsageKey), with an Enterprise key on probation
 * moved to its bracket's probation member only when the bracket's record names that very member. Otherwise, and when
 * the record cannot be read, the key stays on its ordinary pool member. That is the safe choice: the member exists
 * (the admin tool makes a bracket's members before any record names the bracket), so the request is served and the
 * function's limiter still holds the key to its own limits; probation only keeps a flooding key's ban cycles off the
 * member it shares, which is worth less than a customer's request. A member the data does not show, named anyway,
 * would be an API key on no usage plan: API Gateway answers 403 for every request of the key for up to a day, and
 * no function, alarm or gate sees it. Only a cache miss of an Enterprise key on probation pays this second read.
 */
export async function probationUsageKey(
  storage: Storage,
  auth: Authenticated,
  decision: GateDecision,
  stage: string,
): Promise<string> {
  const named = gateUsageKey(auth, decision, stage);
  if (decision !== 'probation' || auth.plan !== 'enterprise' || named === auth.usageIdentifierKey) return named;
  // Presence decides, not the value: each stage has tables of its own, and a local target's admin tool names its
  // stage otherwise than the local gateway's authorizer does (whose bracket plans take any member).
  const recorded = await readBracketProbation(storage, enterpriseBracket(auth).id).catch(() => undefined);
  return recorded === undefined ? auth.usageIdentifierKey : named;
}
