/**
 * Each function's environment from the template, resolved to local values, as Lambda would give it to that function
 * alone (CURSOR_SECRET_ARN only to listPets, for instance: with STAGE=local its runtime ignores the ARN and signs
 * cursors with CURSOR_SECRET or the development constant, without Secrets Manager). A few settings are local on purpose (localSettings says
 * why). The functions run in the gateway's process, but each is built from its own configuration: nothing is set
 * in process.env.
 */
import { resolver, LOCAL_REGION, type LocalValues } from './intrinsics.ts';
import type { CfnTemplate, FunctionDef } from './template.ts';

/** Lambda runtime settings for a process of a function's own; here the functions share the gateway's process. */
const PROCESS_LEVEL = new Set(['NODE_OPTIONS']);

function localSettings(dynamoEndpoint: string): Record<string, string> {
  return {
    // A local run is a stage of its own: its logs and metrics must not pass for staging's.
    STAGE: 'local',
    AWS_REGION: LOCAL_REGION,
    DYNAMODB_ENDPOINT: dynamoEndpoint,
    // No EMF lines among the developer's logs; the stage's DEBUG logs would flood the terminal.
    METRICS: 'off',
    LOG_LEVEL: 'WARN',
  };
}

/** One function's resolved environment from the template, then the local settings, then `extra`. */
export function functionEnvironment(
  template: CfnTemplate,
  fn: FunctionDef,
  local: LocalValues & { readonly dynamoEndpoint: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const resolve = resolver(template, local);
  const own = Object.entries(fn.environment).filter(([name]) => !PROCESS_LEVEL.has(name));
  return {
    ...Object.fromEntries(own.map(([name, raw]) => [name, resolve(raw)])),
    ...localSettings(local.dynamoEndpoint),
    ...extra,
  };
}
