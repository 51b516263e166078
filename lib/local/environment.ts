/**
 * The functions' environment from the template, resolved to local values. The functions share this process (so
 * tests can move the service clock and watch the shared clients), hence one environment for all: every variable
 * two functions both set must have one value, and a variable only some functions get (CURSOR_SECRET) is visible to
 * all. A few settings are local on purpose (LOCAL_SETTINGS says why).
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
    // No EMF lines on stdout; the stage's DEBUG logs would flood the terminal (POWERTOOLS_LOG_LEVEL overrides).
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
  };
}

/** The merged, resolved environment of the template's functions, then the local settings, then `extra`. */
export function functionEnvironment(
  template: CfnTemplate,
  functions: Iterable<FunctionDef>,
  local: LocalValues & { readonly dynamoEndpoint: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const resolve = resolver(template, local);
  const merged: Record<string, string> = {};
  const setBy: Record<string, string> = {};
  for (const fn of functions) {
    for (const [name, raw] of Object.entries(fn.environment)) {
      if (PROCESS_LEVEL.has(name)) continue;
      const value = resolve(raw);
      if (name in merged && merged[name] !== value) {
        throw new Error(
          `${name} differs between ${setBy[name]} and ${fn.logicalId}: the local gateway runs all functions in one process`,
        );
      }
      merged[name] = value;
      setBy[name] = fn.logicalId;
    }
  }
  return { ...merged, ...localSettings(local.dynamoEndpoint), ...extra };
}
