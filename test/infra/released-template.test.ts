/**
 * The last release as a fixture: each stage's template as that release deployed it (test/fixtures/releases/<commit>/,
 * replaced when a release is cut: README, "Cutting a release"), and the update rules from it to the current synth
 * of the same stage, as the next deploy will meet them. A change the deployed stacks cannot take fails here, in CI,
 * rather than mid-deploy: a stateful or fixed-name resource replaced, dropped or moved to another logical id (a
 * second `live` alias), an index change DynamoDB refuses. Only what the update rules read is compared (logical ids,
 * types, create-only properties): figures such as quotas, throttles and WAF limits change in place and may differ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGES, type StageName } from '../../lib/config/stages.ts';
import { previousTemplateCheck } from '../../lib/preflight/checks.ts';
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

it('keeps exactly one release: the one deployed last, which the next deploy updates', () => {
  // An older release would flag what the last one already changed (an index added in one release and the old one
  // dropped in the next reads as two changes at once): git history keeps the earlier fixtures.
  expect(released.map((d) => d.name)).toHaveLength(1);
});

const releaseDir = join(RELEASES, released[0]?.name ?? 'none');
const releasedTemplate = (stage: StageName): CfnTemplate =>
  JSON.parse(readFileSync(join(releaseDir, `${STAGES[stage].stackName}.template.json`), 'utf8'));

// The current synth of both stages, from one app.
let synthesized: Record<StageName, CfnTemplate>;
beforeAll(() => {
  synthesized = Object.fromEntries(
    DEPLOYED.map((stage) => [stage, sharedTemplateJson(stage) as CfnTemplate]),
  ) as Record<StageName, CfnTemplate>;
}, 240_000);

describe.each(DEPLOYED)('%s, from the released template', (stage) => {
  let previous: CfnTemplate;
  let current: CfnTemplate;
  beforeAll(() => {
    previous = releasedTemplate(stage);
    current = synthesized[stage];
  });

  it('is a whole stage template, with the resources the update rules guard', () => {
    // Not a trimmed copy that would pass vacuously: the tables, the REST API and every function's `live` alias.
    const types = Object.values(previous.Resources).map((r) => r.Type);
    expect(types).toContain('AWS::DynamoDB::GlobalTable');
    expect(types).toContain('AWS::ApiGateway::RestApi');
    expect(types.filter((t) => t === 'AWS::Lambda::Alias').length).toBeGreaterThanOrEqual(5);
  });

  it('updates to the current synth with no finding that blocks a deploy', () => {
    expect(updateFindings(previous, current)).toEqual([]);
  });

  it('keeps every deployed live alias under its logical id', () => {
    // The rules above already name a moved alias; this says which ids the deployed stack holds, should one move.
    const aliases = Object.entries(previous.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
    for (const [id] of aliases) expect(current.Resources[id]?.Type, id).toBe('AWS::Lambda::Alias');
  });

  it('passes npm run preflight --previous <released template> (its update rules, as a deploy runs them)', async () => {
    const { findings } = await preflight({
      stage,
      previous,
      context: CONTEXT[stage],
      exclusively: true,
      checks: [previousTemplateCheck],
    });
    expect(findings).toEqual([]);
  }, 240_000);
});
