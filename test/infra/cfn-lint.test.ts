/**
 * The templates as CloudFormation reads them, for every variant the docs describe: AWS's own linter (cfn-lint, with
 * the checked-in .cfnlintrc.yaml) reports nothing, and no template has a dependency cycle (prod-ops.test.ts pins how
 * CodeDeploy's grant avoids the one it once closed without widening it).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependencyGraph, findCycle, type Template } from './dependency-graph.ts';
import { synthesizeVariants } from './template-variants.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const probe = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
const haveLinter = probe.status === 0;
if (!haveLinter && !process.env.CI)
  console.warn(
    'cfn-lint is not installed: the template lint is skipped. Install it with `pipx install cfn-lint` (or `pip install cfn-lint`) to run it; on CI a missing cfn-lint fails.',
  );

let files: Record<string, string[]> = {};
const templates = (): [string, Template][] =>
  Object.entries(files).flatMap(([variant, paths]) =>
    paths.map((p): [string, Template] => [`${variant}/${p.split('/').pop()}`, JSON.parse(readFileSync(p, 'utf8'))]),
  );

beforeAll(() => {
  files = synthesizeVariants();
}, 240_000);
afterAll(() => {
  for (const paths of Object.values(files)) if (paths[0]) rmSync(dirname(paths[0]), { recursive: true, force: true });
});

describe.skipIf(!haveLinter && !process.env.CI)('cfn-lint', () => {
  it('reports no error and no warning on any template of any variant', () => {
    expect(probe.error?.message ?? '', 'cfn-lint must be installed where CI runs').toBe('');
    const all = Object.values(files).flat();
    expect(all.length).toBeGreaterThanOrEqual(12);
    const run = spawnSync(
      'cfn-lint',
      ['--config-file', `${ROOT}.cfnlintrc.yaml`, '--format', 'parseable', '--', ...all],
      {
        cwd: ROOT,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    expect(`${run.stdout}${run.stderr}`).toBe('');
    expect(run.status).toBe(0);
  }, 300_000);
});

it('no template has a dependency cycle', () => {
  for (const [name, template] of templates())
    expect(findCycle(dependencyGraph(template)), `${name} has a cycle`).toBeUndefined();
});

it('the cycle check sees a cycle closed through an update policy', () => {
  const template: Template = {
    Resources: {
      Alias: { UpdatePolicy: { CodeDeployLambdaAliasUpdate: { DeploymentGroupName: { Ref: 'Group' } } } },
      Group: { DependsOn: ['Policy'] },
      Policy: { Properties: { PolicyDocument: { Statement: [{ Resource: { Ref: 'Alias' } }] } } },
    },
  };
  expect(findCycle(dependencyGraph(template))).toEqual(['Alias', 'Group', 'Policy', 'Alias']);
});
