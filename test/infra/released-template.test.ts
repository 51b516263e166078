/**
 * The releases a stage may run when this one is deployed, as fixtures: each stage's template as that release deployed
 * it (test/fixtures/releases/<release>/: the last release, and the one before the upgrade that needs an intermediate
 * release; docs/deployment.md, "Cutting a release"), and the update rules from each to the current synth of the same
 * stage, as the next deploy will meet them. A change the deployed stacks cannot take fails here, in CI, rather than
 * mid-deploy: a stateful or fixed-name resource replaced, dropped or moved to another logical id (a second `live`
 * alias), an index change DynamoDB refuses. Only what the update rules read is compared (logical ids, types,
 * create-only properties): figures such as quotas, throttles and WAF limits change in place and may differ. A released
 * stack this release cannot follow (lib/preflight/follow.ts) gets the follow rule's one line, and only it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLAN_NAMES } from '../../contract/plans.ts';
import { STAGES, type StageName } from '../../lib/config/stages.ts';
import { previousTemplateCheck } from '../../lib/preflight/checks.ts';
import { INTERMEDIATE_RELEASE, planKeyIds } from '../../lib/preflight/follow.ts';
import { preflight } from '../../lib/preflight/run.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { sharedTemplateJson } from './shared-synth.ts';
import { PRODUCTION_CONTEXT } from './synth-context.ts';

const RELEASES = fileURLToPath(new URL('../fixtures/releases/', import.meta.url));
const released = readdirSync(RELEASES, { withFileTypes: true }).filter((d) => d.isDirectory());

// The stages the release deployed; the fixture holds one template for each.
const DEPLOYED: readonly StageName[] = ['staging', 'production'];
// What `npm run preflight` needs on the command line for each stage (production refuses to synthesize without it).
const CONTEXT: Record<StageName, Record<string, string>> = { staging: {}, production: { ...PRODUCTION_CONTEXT } };

it('keeps the last release and the one an upgrade starts from: 3357b0c, then plan-keys-1', () => {
  // An older release would flag what a later one already changed (an index added in one release and the old one
  // dropped in the next reads as two changes at once): git history keeps the earlier fixtures.
  expect(released.map((d) => d.name).sort()).toEqual(['3357b0c', 'plan-keys-1']);
});

const releasedTemplate = (release: string, stage: StageName): CfnTemplate =>
  JSON.parse(readFileSync(join(RELEASES, release, `${STAGES[stage].stackName}.template.json`), 'utf8'));

// The current synth of both stages, from one app.
let synthesized: Record<StageName, CfnTemplate>;
beforeAll(() => {
  synthesized = Object.fromEntries(
    DEPLOYED.map((stage) => [stage, sharedTemplateJson(stage) as CfnTemplate]),
  ) as Record<StageName, CfnTemplate>;
}, 240_000);

describe.each(released.flatMap((d) => DEPLOYED.map((stage) => [d.name, stage] as const)))('%s %s', (release, stage) => {
  let previous: CfnTemplate;
  let current: CfnTemplate;
  // What the update rules find: nothing, or over a release without the plan keys, the follow rule's line.
  let expected: unknown[];
  beforeAll(() => {
    previous = releasedTemplate(release, stage);
    current = synthesized[stage];
    const follows = planKeyIds(previous, stage).size === PLAN_NAMES.length;
    expected = follows ? [] : [expect.stringContaining(`deploy ${INTERMEDIATE_RELEASE} first, then this release`)];
  });

  it('is a whole stage template, with the resources the update rules guard', () => {
    // Not a trimmed copy that would pass vacuously: the tables, the REST API and every function's `live` alias.
    const types = Object.values(previous.Resources).map((r) => r.Type);
    expect(types).toContain('AWS::DynamoDB::GlobalTable');
    expect(types).toContain('AWS::ApiGateway::RestApi');
    expect(types.filter((t) => t === 'AWS::Lambda::Alias').length).toBeGreaterThanOrEqual(5);
  });

  it('updates to the current synth with no finding that blocks a deploy but the follow rule', () => {
    expect(updateFindings(previous, current, undefined, stage)).toEqual(expected);
  });

  it('keeps every deployed live alias under its logical id', () => {
    // The rules above already name a moved alias; this says which ids the deployed stack holds, should one move.
    const aliases = Object.entries(previous.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
    for (const [id] of aliases) expect(current.Resources[id]?.Type, id).toBe('AWS::Lambda::Alias');
  });

  it('meets npm run preflight --previous <released template> as above (its update rules, as a deploy runs them)', async () => {
    const { findings } = await preflight({
      stage,
      previous,
      context: CONTEXT[stage],
      exclusively: true,
      checks: [previousTemplateCheck],
    });
    expect(findings).toEqual(expected);
  }, 240_000);
});
