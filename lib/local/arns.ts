/**
 * A template's values as AWS would form them in one account and Region: `Ref` and `Fn::GetAtt` of the resource types
 * our stacks create, resolved to the names and ARNs their CloudFormation documentation gives (a function's `Arn`
 * is its unqualified ARN, an alias's `Ref` its qualified one, a log group's `Arn` ends in `:*`, a key's `Ref` is its
 * key id…). A resource without a name property gets a generated name of CloudFormation's form
 * (`<stack>-<logicalId>-<suffix>`), the same wherever it is named. For checking policies against the ARNs AWS
 * authorizes calls on (the IAM walks in test/infra); the local gateway resolves its own values (intrinsics.ts).
 */
import type { CfnTemplate } from './template.ts';

export interface AwsPlace {
  readonly account: string;
  readonly region: string;
  readonly partition?: string;
  readonly stackName?: string;
}

/** The property that names each resource type, where it has one. */
const NAME_PROPERTY: Readonly<Record<string, string>> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::SecretsManager::Secret': 'Name',
  // Ref of each is its name (a deployment group's ARN is spelt from both: `deploymentgroup:<application>/<group>`).
  'AWS::CodeDeploy::Application': 'ApplicationName',
  'AWS::CodeDeploy::DeploymentGroup': 'DeploymentGroupName',
};

export interface AwsValues {
  /** Resolves a template value (a string or an intrinsic) to the string AWS would give it. */
  resolve(value: unknown): string;
  /** The physical name of a resource of the template. */
  nameOf(logicalId: string): string;
  /** `arn:<partition>:<service>:<region>:<account>:<rest>` in this place. */
  arn(service: string, rest: string, scope?: { region?: string; account?: string }): string;
}

export function awsValues(t: CfnTemplate, place: AwsPlace): AwsValues {
  const partition = place.partition ?? 'aws';
  const stack = place.stackName ?? 'stack';
  const pseudo: Record<string, string> = {
    'AWS::AccountId': place.account,
    'AWS::Region': place.region,
    'AWS::Partition': partition,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': stack,
  };
  const arn: AwsValues['arn'] = (service, rest, scope = {}) =>
    `arn:${partition}:${service}:${scope.region ?? place.region}:${scope.account ?? place.account}:${rest}`;
  const resource = (id: string) => {
    const r = t.Resources[id];
    if (!r) throw new Error(`no resource ${id} in the template`);
    return r;
  };
  const nameOf = (id: string): string => {
    const r = resource(id);
    const prop = NAME_PROPERTY[r.Type];
    const named = prop ? r.Properties?.[prop] : undefined;
    return named !== undefined ? resolve(named) : `${stack}-${id}-GENERATED`;
  };
  const refOf = (id: string): string => {
    if (pseudo[id]) return pseudo[id];
    const r = resource(id);
    const p = r.Properties ?? {};
    switch (r.Type) {
      case 'AWS::Lambda::Alias':
        return `${functionArn(p.FunctionName)}:${resolve(p.Name)}`;
      case 'AWS::Lambda::Version':
        return `${functionArn(p.FunctionName)}:1`;
      case 'AWS::SNS::Topic':
        return arn('sns', nameOf(id));
      case 'AWS::SecretsManager::Secret':
        return arn('secretsmanager', `secret:${nameOf(id)}-AbCdEf`);
      case 'AWS::KMS::Key':
        return `key-${id}`;
      case 'AWS::ApiGateway::RestApi':
        return `api${id}`.slice(0, 10).toLowerCase();
      default:
        if (NAME_PROPERTY[r.Type]) return nameOf(id);
        throw new Error(`no AWS value for Ref ${id} (${r.Type})`);
    }
  };
  /** A function named by `Ref` (its name) or by its ARN, as its unqualified ARN. */
  const functionArn = (value: unknown): string => {
    const v = resolve(value);
    return v.startsWith('arn:') ? v : arn('lambda', `function:${v}`);
  };
  const getAtt = (id: string, attribute: string): string => {
    const r = resource(id);
    const key = `${r.Type}.${attribute}`;
    switch (key) {
      case 'AWS::Lambda::Function.Arn':
        return arn('lambda', `function:${nameOf(id)}`);
      case 'AWS::DynamoDB::Table.Arn':
      case 'AWS::DynamoDB::GlobalTable.Arn':
        return arn('dynamodb', `table/${nameOf(id)}`);
      case 'AWS::DynamoDB::Table.StreamArn':
      case 'AWS::DynamoDB::GlobalTable.StreamArn':
        return arn('dynamodb', `table/${nameOf(id)}/stream/2026-01-01T00:00:00.000`);
      case 'AWS::CloudWatch::Alarm.Arn':
        return arn('cloudwatch', `alarm:${nameOf(id)}`);
      case 'AWS::Logs::LogGroup.Arn':
        return arn('logs', `log-group:${nameOf(id)}:*`);
      case 'AWS::KMS::Key.Arn':
        return arn('kms', `key/${refOf(id)}`);
      case 'AWS::KMS::Key.KeyId':
        return refOf(id);
      case 'AWS::IAM::Role.Arn':
        return `arn:${partition}:iam::${place.account}:role/${nameOf(id)}`;
      case 'AWS::SNS::Topic.TopicArn':
        return refOf(id);
      case 'AWS::SNS::Topic.TopicName':
        return nameOf(id);
      case 'AWS::SecretsManager::Secret.Id':
        return refOf(id);
      default:
        throw new Error(`no AWS value for Fn::GetAtt ${id}.${attribute} (${r.Type})`);
    }
  };
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const o = (value ?? {}) as Record<string, any>;
    if (typeof o.Ref === 'string') return refOf(o.Ref);
    if (o['Fn::GetAtt'] !== undefined) {
      const [id, attribute] = Array.isArray(o['Fn::GetAtt']) ? o['Fn::GetAtt'] : String(o['Fn::GetAtt']).split('.');
      return getAtt(String(id), String(attribute));
    }
    if (o['Fn::Join']) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(sep);
    }
    if (o['Fn::Sub'] !== undefined) {
      const [text, vars = {}] = (Array.isArray(o['Fn::Sub']) ? o['Fn::Sub'] : [o['Fn::Sub']]) as [
        string,
        Record<string, unknown>?,
      ];
      return text.replace(/\$\{([^}!]+)\}/g, (_m, name: string) => {
        if (name in vars) return resolve(vars[name]);
        const [id, attribute] = name.split('.');
        return attribute ? getAtt(id!, attribute) : refOf(id!);
      });
    }
    if (o['Fn::Select'] !== undefined) {
      // CDK names an imported function by a part of its ARN: `Fn::Select [6, Fn::Split [':', <arn>]]`.
      const [index, from] = o['Fn::Select'] as [number | string, unknown];
      const items = (from as Record<string, unknown>)?.['Fn::Split']
        ? (() => {
            const [sep, text] = (from as Record<string, [string, unknown]>)['Fn::Split']!;
            return resolve(text).split(sep);
          })()
        : (from as unknown[]).map(resolve);
      const item = items[Number(index)];
      if (item === undefined) throw new Error(`no item ${index} in ${JSON.stringify(from)}`);
      return item;
    }
    throw new Error(`no AWS value for ${JSON.stringify(value)}`);
  };
  return { resolve, nameOf, arn };
}
