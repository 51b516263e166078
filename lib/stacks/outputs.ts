/**
 * The stack's output ids: the stack creates its outputs under these ids and the admin tool finds a stage's tables,
 * API and usage plans by them (CloudFormation DescribeStacks). Plain data with no CDK import, so the admin CLI,
 * which imports it, stays light.
 */
import { PLANS, type PlanName } from '../../contract/plans.ts';
import type { TableDefinition } from '../../contract/tables.ts';

export const OUTPUT_IDS = {
  apiUrl: 'ApiUrl',
  apiId: 'ApiId',
  customDomainUrl: 'CustomDomainUrl',
  customDomainTarget: 'CustomDomainTarget',
  dashboardName: 'DashboardName',
  alarmTopicArn: 'AlarmTopicArn',
  deployApplicationName: 'DeployApplicationName',
  cursorSecretArn: 'CursorSecretArn',
  /** The key layout the stage's authorizer understands (contract/key-layout.ts): the admin tool's writes wait for it. */
  keyLayout: 'KeyLayout',
} as const;

/** The output holding a table's physical name, from its environment variable: `PETS_TABLE_NAME` → `PetsTableName`. */
export const tableNameOutputId = (table: Pick<TableDefinition, 'envVar'>): string =>
  `${table.envVar
    .replace(/_TABLE_NAME$/, '')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase())}TableName`;

/** The output holding the id of a standard plan's usage plan: `UsagePlanIdFree`. */
export const usagePlanOutputId = (plan: PlanName): string => `UsagePlanId${PLANS[plan].displayName}`;
