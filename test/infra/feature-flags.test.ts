/**
 * The CDK's recommended feature flags, all set in cdk.json as `cdk init` sets them for a new app (several change
 * security defaults: IAM policy minimization, KMS scopes, validation of snapshot removal policies), and what turning
 * them on does to a deployed stack: the templates synthesized with the flags this app had before and with cdk.json's
 * now differ in no way the update rules object to (no stateful or fixed-name resource replaced, no index change).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { Template } from 'aws-cdk-lib/assertions';
import { expect, it } from 'vitest';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, PRODUCTION_CONTEXT } from './synth-context.ts';

// The package's `exports` map hides cx-api's flag table; it is the one `cdk flags` and `cdk init` read.
const require = createRequire(import.meta.url);
const features = require(
  require.resolve('aws-cdk-lib/package.json').replace(/package\.json$/, 'cx-api/lib/features.js'),
) as { CURRENTLY_RECOMMENDED_FLAGS: Record<string, unknown> };

/** The flags cdk.json set before the recommended ones were turned on. */
const EARLIER_FLAGS = [
  '@aws-cdk/aws-apigateway:disableCloudWatchRole',
  '@aws-cdk/core:stackRelativeExports',
  '@aws-cdk/aws-lambda:recognizeLayerVersion',
  '@aws-cdk/aws-lambda-nodejs:useLatestRuntimeVersion',
  '@aws-cdk/aws-apigateway:usagePlanKeyOrderInsensitiveId',
  '@aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId',
  '@aws-cdk/aws-apigateway:logGroupDestinationArnWithoutWildcard',
];

/** Flags set against the recommendation, each with its reason in docs/deployment.md ("Feature flags"). */
const DEVIATIONS: Readonly<Record<string, unknown>> = {
  // Every error annotation would fail the whole app's synth: production's missing context would stop staging's.
  '@aws-cdk/core:annotationsInValidationReport': false,
};

it('cdk.json sets every recommended feature flag, to its recommended value or a documented other one', () => {
  const recommended = features.CURRENTLY_RECOMMENDED_FLAGS;
  expect(Object.keys(recommended).length).toBeGreaterThan(80);
  const off = Object.entries(recommended).filter(
    ([flag, value]) =>
      JSON.stringify(CDK_JSON_CONTEXT[flag]) !== JSON.stringify(flag in DEVIATIONS ? DEVIATIONS[flag] : value),
  );
  expect(off).toEqual([]);
  const docs = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
  for (const flag of Object.keys(DEVIATIONS)) expect(docs).toContain(`\`${flag}\``);
});

it('turning them on replaces or drops nothing stateful or fixed-name in any stack', () => {
  const earlier = Object.fromEntries(
    Object.entries(CDK_JSON_CONTEXT).filter(
      ([k]) => !(k in features.CURRENTLY_RECOMMENDED_FLAGS) || EARLIER_FLAGS.includes(k),
    ),
  );
  const synth = (context: Record<string, unknown>) => {
    const { stacks, accountSettings } = createApp({ context: { ...context, ...NO_BUNDLING, ...PRODUCTION_CONTEXT } });
    return [stacks.staging, stacks.production, accountSettings].map(
      (s) => [s.stackName, Template.fromStack(s).toJSON() as CfnTemplate] as const,
    );
  };
  const [before, after] = [synth(earlier), synth(CDK_JSON_CONTEXT)];
  for (const [i, [name, template]] of after.entries()) {
    expect(name).toBe(before[i]![0]);
    expect(updateFindings(before[i]![1], template), name).toEqual([]);
    // The same resources under the same ids: the flags change properties (policy statement order), not identity.
    expect(Object.keys(template.Resources).sort(), name).toEqual(Object.keys(before[i]![1].Resources).sort());
  }
}, 600_000);

it('npx cdk flags lists no flag as unset', async () => {
  const { stdout, stderr } = await promisify(execFile)('npx', ['cdk', 'flags', '--unstable=flags'], {
    cwd: new URL('../../', import.meta.url).pathname,
    maxBuffer: 8 << 20,
  });
  const output = `${stdout}${stderr}`;
  expect(output).toMatch(/Unconfigured feature flags/);
  expect(output).not.toContain('<unset>');
}, 300_000);
