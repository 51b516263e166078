/**
 * CloudFormation intrinsics in the functions' environment and roles, resolved to local values: a table's `Ref` to its
 * local physical name and its `Arn` to a local ARN, pseudo parameters to a fake account and region, and `{{resolve:secretsmanager:…}}` dynamic
 * references to a fixed local value per secret (locally nothing is secret).
 */
import { TABLE_METADATA } from '../stacks/metadata.ts';
import type { CfnTemplate } from './template.ts';

export const LOCAL_ACCOUNT = '123456789012';
export const LOCAL_REGION = 'us-east-1';
const PSEUDO: Record<string, string> = {
  'AWS::AccountId': LOCAL_ACCOUNT,
  'AWS::Region': LOCAL_REGION,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'local',
};

/** A local table's ARN, as a table's `Fn::GetAtt … Arn` resolves and as IAM names the resource of a call on it. */
export const tableArn = (table: string): string => `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${table}`;

export interface LocalValues {
  /** Local physical table names by table definition id (`Pets` → `prefix-Pets`). */
  readonly tables: Readonly<Record<string, string>>;
}

/** Resolves one value of the template to a string the local functions can use. */
export function resolver(t: CfnTemplate, local: LocalValues): (value: unknown) => string {
  const ref = (id: string): string => {
    if (PSEUDO[id]) return PSEUDO[id];
    const r = t.Resources[id];
    const table = r?.Metadata?.[TABLE_METADATA];
    if (typeof table === 'string' && local.tables[table]) return local.tables[table];
    if (r?.Type === 'AWS::SecretsManager::Secret') return `local-secret-${id}`;
    throw new Error(`the local gateway cannot resolve Ref ${id} (${r?.Type ?? 'unknown'})`);
  };
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return secretReference(value);
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const o = (value ?? {}) as Record<string, any>;
    if (typeof o.Ref === 'string') return ref(o.Ref);
    if (Array.isArray(o['Fn::GetAtt']) && o['Fn::GetAtt'][1] === 'Arn') {
      const id = String(o['Fn::GetAtt'][0]);
      const table = t.Resources[id]?.Metadata?.[TABLE_METADATA];
      if (typeof table === 'string' && local.tables[table]) return tableArn(local.tables[table]);
    }
    if (o['Fn::Join']) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return secretReference(parts.map(resolve).join(sep));
    }
    throw new Error(`the local gateway cannot resolve ${JSON.stringify(value)}`);
  };
  return resolve;
}

/** `{{resolve:secretsmanager:<id>:SecretString:::}}` → the secret's local value (the id is already resolved). */
function secretReference(s: string): string {
  return s.replace(/\{\{resolve:secretsmanager:([^:}]+)[^}]*\}\}/g, (_m, id: string) => id);
}
