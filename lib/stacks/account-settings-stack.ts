import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ApiGatewayAccount } from '../constructs/api-gateway-account.ts';

/** The stack name: `npx cdk deploy AnimalStore-account` once per account and Region, before the first stage. */
export const ACCOUNT_SETTINGS_STACK = 'AnimalStore-account';

/**
 * Settings that exist once per account and Region, shared by every stage deployed there (and by other APIs of the
 * account): API Gateway's CloudWatch Logs role. Deployed on its own, before the stages; the stage stacks never touch
 * account-wide settings.
 */
export class AccountSettingsStack extends Stack {
  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    new ApiGatewayAccount(this, 'ApiGateway');
  }
}
