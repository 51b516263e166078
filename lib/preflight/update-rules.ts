/**
 * The update rules: what an update of a deployed stack must never do, read off the previous and the next template.
 * CloudFormation replaces a resource whose logical id changes (a new one is created, the old one deleted or, when
 * retained, orphaned), whose type changes, or one of whose create-only properties changes. For the resources below
 * a replacement loses data (tables, secrets, keys, logs), detaches every API key from a usage plan (403 for its
 * callers), or fails outright because the new resource needs the name or value the old one still holds (API key
 * values, log group, sampling rule and dashboard names). Create-only properties are those of the CloudFormation
 * resource provider schemas (`createOnlyProperties`, as cfn-lint 1.51 ships them), plus a table's key schema and
 * local indexes (which DynamoDB cannot change in place).
 */
import { followRule } from './follow.ts';
import { indexFindings, type IndexReaders } from './index-rules.ts';
import { declaredIndexReaders } from './index-readers.ts';
import { dependenciesOf, resourcesOfType, referencedIds, waitsFor, type CfnTemplate, type Json } from './template.ts';

/** Stateful or fixed-name resource types, with the properties whose change replaces the resource. */
export const REPLACEMENT_PROPERTIES: Readonly<Record<string, readonly string[]>> = {
  'AWS::DynamoDB::GlobalTable': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::DynamoDB::Table': ['TableName', 'KeySchema', 'LocalSecondaryIndexes', 'ImportSourceSpecification'],
  'AWS::SecretsManager::Secret': ['Name'],
  'AWS::KMS::Key': [],
  'AWS::ApiGateway::RestApi': [],
  'AWS::ApiGateway::Stage': ['RestApiId', 'StageName'],
  'AWS::ApiGateway::UsagePlan': [],
  'AWS::ApiGateway::ApiKey': ['GenerateDistinctId', 'Name', 'Value'],
  'AWS::ApiGateway::UsagePlanKey': ['KeyId', 'UsagePlanId', 'KeyType'],
  'AWS::ApiGateway::DomainName': ['DomainName'],
  'AWS::ApiGateway::BasePathMapping': ['DomainName', 'BasePath'],
  'AWS::ApiGateway::Account': [],
  'AWS::Logs::LogGroup': ['LogGroupName'],
  'AWS::SNS::Topic': ['TopicName', 'FifoTopic'],
  'AWS::WAFv2::WebACL': ['Name', 'Scope'],
  'AWS::CodeDeploy::Application': ['ApplicationName', 'ComputePlatform'],
  'AWS::XRay::SamplingRule': ['SamplingRule.Version'],
  'AWS::CloudWatch::Dashboard': ['DashboardName'],
  // A fixed name (`live`) on one function: a second alias of that name is refused.
  'AWS::Lambda::Alias': ['FunctionName', 'Name'],
};

/**
 * The properties that name a resource uniquely in its account and Region (or on its function). A resource of
 * these types that moves to another logical id with the same name fails the update: CloudFormation creates the new
 * one before deleting the old, and the name is still taken.
 */
export const FIXED_NAME_PROPERTIES: Readonly<Record<string, readonly string[]>> = {
  'AWS::Lambda::Alias': ['FunctionName', 'Name'],
  'AWS::Logs::LogGroup': ['LogGroupName'],
  'AWS::SecretsManager::Secret': ['Name'],
  'AWS::WAFv2::WebACL': ['Name', 'Scope'],
  'AWS::CloudWatch::Dashboard': ['DashboardName'],
  'AWS::XRay::SamplingRule': ['SamplingRule.RuleName'],
  'AWS::CodeDeploy::Application': ['ApplicationName'],
  'AWS::SNS::Topic': ['TopicName'],
  'AWS::DynamoDB::GlobalTable': ['TableName'],
  'AWS::DynamoDB::Table': ['TableName'],
  'AWS::ApiGateway::ApiKey': ['Value'],
};

const at = (props: Record<string, Json> | undefined, path: string): Json =>
  path
    .split('.')
    .reduce<Json>((v, k) => (v && typeof v === 'object' ? (v as Record<string, Json>)[k] : undefined), props);

/**
 * The logical ids of the next template whose resource CloudFormation would replace: its type or a create-only
 * property changed, or a create-only property names a resource that is itself replaced or new (its physical id
 * changes: "may be replaced" in `cdk diff`).
 */
export function replacedResources(previous: CfnTemplate, next: CfnTemplate): Map<string, string> {
  const replaced = new Map<string, string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [id, r] of Object.entries(next.Resources)) {
      const before = previous.Resources[id];
      if (!before || replaced.has(id)) continue;
      let why: string | undefined;
      if (before.Type !== r.Type) why = `type ${before.Type} becomes ${r.Type}`;
      for (const prop of REPLACEMENT_PROPERTIES[r.Type] ?? []) {
        if (why) break;
        const [was, is] = [at(before.Properties, prop), at(r.Properties, prop)];
        if (JSON.stringify(was) !== JSON.stringify(is)) why = `${prop} changes`;
        else
          for (const target of referencedIds(is))
            if (replaced.has(target) || (target in next.Resources && !(target in previous.Resources)))
              why ??= `${prop} names ${target}, which is replaced or new`;
      }
      if (why) {
        replaced.set(id, why);
        grew = true;
      }
    }
  }
  return replaced;
}

/** The fixed name of a resource (its naming properties' values), or undefined where it has none. */
function fixedName(r: { Type: string; Properties?: Record<string, Json> }): string | undefined {
  const props = FIXED_NAME_PROPERTIES[r.Type];
  const values = props?.map((p) => at(r.Properties, p));
  return values && values.every((v) => v !== undefined) ? JSON.stringify(values) : undefined;
}

/**
 * One line per stateful or fixed-name resource the update would replace or remove, per fixed-name resource that
 * moves to another logical id under its name, and per index change DynamoDB cannot make in one update
 * (index-rules.ts). Given the stage's name, the follow rule (follow.ts) judges the API keys and usage plans the
 * update deletes; without it, every one deleted is a line.
 */
export function updateFindings(
  previous: CfnTemplate,
  next: CfnTemplate,
  readers: IndexReaders = declaredIndexReaders,
  stage?: string,
): string[] {
  const guarded = (type: string) => type in REPLACEMENT_PROPERTIES;
  const follow = stage === undefined ? undefined : followRule(stage, previous, next);
  const findings: string[] = [...(follow?.findings ?? [])];
  const replaced = replacedResources(previous, next);
  for (const [id, why] of replaced)
    if (guarded(previous.Resources[id]!.Type) || guarded(next.Resources[id]!.Type))
      findings.push(`update: ${id} (${next.Resources[id]!.Type}) would be replaced: ${why}`);
  const added = Object.entries(next.Resources).filter(([id]) => !(id in previous.Resources));
  for (const [id, r] of Object.entries(previous.Resources)) {
    if (!guarded(r.Type) || id in next.Resources) continue;
    const name = fixedName(r);
    const heir = name && added.find(([, n]) => n.Type === r.Type && fixedName(n) === name)?.[0];
    if (heir)
      findings.push(
        `update: ${id} (${r.Type}) moves to logical id ${heir} under the same name ${name}: CloudFormation creates ${heir} before deleting ${id} and fails on the name taken: pin the logical id back to ${id}`,
      );
    else if (!follow?.judged.has(id))
      findings.push(
        `update: ${id} (${r.Type}) leaves the template: deleted or orphaned (a changed logical id replaces it)`,
      );
  }
  findings.push(...indexFindings(previous, next, new Set(replaced.keys()), readers));
  return findings;
}

/**
 * One line per pair of usage plans that CloudFormation could create, update or delete at the same time: API
 * Gateway allows one UpdateUsagePlan request every 20 s per account, so every plan must wait for another.
 */
export function unorderedUsagePlans(template: CfnTemplate): string[] {
  const graph = dependenciesOf(template);
  const plans = resourcesOfType(template, 'AWS::ApiGateway::UsagePlan').map(([id]) => id);
  const findings: string[] = [];
  for (let i = 0; i < plans.length; i++)
    for (let j = i + 1; j < plans.length; j++) {
      const [a, b] = [plans[i]!, plans[j]!];
      if (!waitsFor(graph, a, b) && !waitsFor(graph, b, a))
        findings.push(`usage plans: ${a} and ${b} can be updated at once (UpdateUsagePlan: 1 request / 20 s)`);
    }
  return findings;
}
