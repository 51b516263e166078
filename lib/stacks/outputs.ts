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
  /**
   * Which API keys the stage's authorizer names (USAGE_KEYS_PER_PLAN: each plan's one key). A stack without it runs
   * release 3357b0c's authorizer (or plan-keys-1's, the same), which names a paying key's own API key: the admin tool
   * makes no such key, so it makes no paying key there.
   */
  usageKeys: 'UsageKeys',
  /**
   * The stage's share of the account's quotas (StageConfig.accountShare), as a decimal: preflight adds up the shares of
   * the stages in one account. A stack without it was sized to the whole account (share 1).
   */
  accountShare: 'AccountShare',
  /** Why a deploy broke glass (lib/stacks/break-glass.ts): present only in a break-glass deploy's template. */
  breakGlass: 'BreakGlass',
} as const;

/** The UsageKeys output's value: the authorizer names each plan's one API key. */
export const USAGE_KEYS_PER_PLAN = 'per-plan';

/** The output holding a table's physical name, from its environment variable: `PETS_TABLE_NAME` → `PetsTableName`. */
export const tableNameOutputId = (table: Pick<TableDefinition, 'envVar'>): string =>
  `${table.envVar
    .replace(/_TABLE_NAME$/, '')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase())}TableName`;

/** The output holding the id of a standard plan's usage plan: `UsagePlanIdFree`. */
export const usagePlanOutputId = (plan: PlanName): string => `UsagePlanId${PLANS[plan].displayName}`;
