/**
 * The context the infrastructure tests synthesize with: cdk.json's (its feature flags, as the CLI passes them), no
 * bundling (cli.test.ts and bundles.test.ts bundle for real), and the two values production refuses to synthesize
 * without: a pinned account and someone who hears its alarms.
 */
import { readFileSync } from 'node:fs';

const CDK_JSON = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

/** cdk.json's context: the feature flags `cdk synth` applies. */
export const CDK_JSON_CONTEXT: Readonly<Record<string, unknown>> = CDK_JSON.context;

/** What production needs on the command line (`-c key=value`). */
export const PRODUCTION_CONTEXT = {
  'animal-store:production:account': '123456789012',
  'animal-store:production:alarmEmails': 'ops@example.com',
} as const;

export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] as string[] };

export const SYNTH_CONTEXT: Readonly<Record<string, unknown>> = {
  ...CDK_JSON_CONTEXT,
  ...NO_BUNDLING,
  ...PRODUCTION_CONTEXT,
};
