/**
 * On-call: every alarm of both stages says what it means and links its section of docs/runbook.md, and every alarm
 * section of the runbook is linked by an alarm of each stage (one-to-one between alarm kinds and sections); the
 * dashboard graphs the requests the web ACL blocks, under the dimensions WAF publishes them with. The runbook's
 * commands work as written: every section starts from one, the outputs and resources they name are the stack's, and
 * no doc lists a stack's resources with a call that returns only the first 100 or does GNU-only date arithmetic.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALARM_RUNBOOK, RUNBOOK_PATH, slug } from '../../lib/constructs/alarm-runbook.ts';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { STANDARD_PLANS } from '../../contract/plans.ts';
import { TABLES } from '../../contract/tables.ts';
import { OUTPUT_IDS, tableNameOutputId, usagePlanOutputId } from '../../lib/stacks/outputs.ts';
import { resourcesOf, synthTemplates, type CfnTemplate } from './templates.ts';

let templates: Record<StageName, CfnTemplate>;
beforeAll(() => {
  templates = synthTemplates();
}, 240_000);

/** The runbook's alarm sections: the `###` headings under `## Alarms`. */
function alarmSections(): string[] {
  const text = readFileSync(RUNBOOK_PATH, 'utf8');
  const part = text.slice(text.indexOf('\n## Alarms\n'));
  const end = part.indexOf('\n## ', 5);
  return [...(end > 0 ? part.slice(0, end) : part).matchAll(/^### (.+)$/gm)].map((m) => m[1]!.trim());
}

it('the runbook has one section per entry of the alarm table, and none besides', () => {
  expect(alarmSections().sort()).toEqual(ALARM_RUNBOOK.map((e) => e.section).sort());
});

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  it('every alarm says what it means and links a section of the runbook; every section is linked', () => {
    const sections = new Map(alarmSections().map((s) => [slug(s), s]));
    const linked = new Set<string>();
    const alarms = resourcesOf(templates[stage], 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(10);
    for (const [id, alarm] of alarms) {
      const description = String(alarm.Properties.AlarmDescription);
      const link = new RegExp(`Runbook: ${RUNBOOK_PATH.replace('.', '\\.')}#([a-z0-9-]+)$`).exec(description);
      expect(link, `${id}: ${description}`).not.toBeNull();
      const section = sections.get(link![1]!);
      expect(section, `${id} links a section that does not exist: ${link![1]}`).toBeDefined();
      expect(description).toContain(ALARM_RUNBOOK.find((e) => e.section === section)!.means);
      expect(description.length, 'CloudWatch: AlarmDescription is at most 1024 characters').toBeLessThanOrEqual(1024);
      linked.add(section!);
    }
    expect([...linked].sort()).toEqual([...sections.values()].sort());
  });

  it("the dashboard graphs the web ACL's blocked requests per blocking rule", () => {
    const t = templates[stage];
    const [, acl] = resourcesOf(t, 'AWS::WAFv2::WebACL')[0]!;
    const [, dashboard] = resourcesOf(t, 'AWS::CloudWatch::Dashboard')[0]!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    const blocking = (acl.Properties.Rules as Array<{ Action?: { Block?: unknown }; VisibilityConfig: any }>).filter(
      (r) => r.Action?.Block,
    );
    expect(blocking.length).toBeGreaterThan(0);
    expect(body).toContain('WAF: requests blocked per rule');
    for (const rule of blocking) {
      const row = ['AWS/WAFV2', 'BlockedRequests', 'Region'];
      expect(body).toContain(JSON.stringify(row).slice(1, -1).replaceAll('"', '\\"'));
      expect(body).toContain(`\\"Rule\\",\\"${rule.VisibilityConfig.MetricName}\\"`);
      expect(body).toContain(`\\"WebACL\\",\\"${acl.Properties.VisibilityConfig.MetricName}\\"`);
    }
  });
});

/** The runbook's sections: the text before the first heading, then each `##`/`###` heading with its text. */
function sections(): Array<{ heading: string; body: string }> {
  const parts = readFileSync(RUNBOOK_PATH, 'utf8').split(/^(?=#{1,3} )/m);
  return parts.map((part) => {
    const [first, ...rest] = part.split('\n');
    return { heading: first!.replace(/^#+ /, ''), body: rest.join('\n').trim() };
  });
}

/** The shell commands of a text: the lines of its fenced blocks, and its inline code that starts with a command. */
function commands(text: string): string[] {
  const fenced = [...text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].flatMap((m) =>
    m[1]!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#')),
  );
  const helpers = [...readFileSync(RUNBOOK_PATH, 'utf8').matchAll(/^([a-z_]+)\(\) \{/gm)].map((m) => m[1]!);
  const starts = new RegExp(`^(aws|npm|npx|node|${helpers.join('|')}) `);
  const inline = [...text.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/`([^`]+)`/g)]
    .map((m) => m[1]!.replace(/\s+/g, ' '))
    .filter((c) => starts.test(c));
  return [...fenced, ...inline];
}

describe('the runbook’s commands', () => {
  it('every section with text gives a command to run first', () => {
    const checked = sections().filter((s) => s.body);
    expect(checked.length).toBeGreaterThan(ALARM_RUNBOOK.length);
    for (const { heading, body } of checked) expect(commands(body), heading).not.toEqual([]);
  });

  it('names only outputs the stack has and resources it declares', () => {
    const text = readFileSync(RUNBOOK_PATH, 'utf8');
    const outputs = new Set<string>([
      ...Object.values(OUTPUT_IDS),
      ...TABLES.map(tableNameOutputId),
      ...STANDARD_PLANS.map(usagePlanOutputId),
    ]);
    const run = commands(text).join('\n');
    const named = [
      ...run.matchAll(/\bout ([A-Za-z0-9]+)/g),
      ...text.matchAll(/[Oo]utput `([A-Za-z0-9]+)`/g),
      ...text.matchAll(/output ([A-Z][A-Za-z0-9]+)\b/g),
    ].map((m) => m[1]!);
    expect(named).toContain(OUTPUT_IDS.deployApplicationName);
    const resources = [...run.matchAll(/\bres ([A-Za-z0-9]+)/g)].map((m) => m[1]!);
    expect(resources.length).toBeGreaterThan(0);
    for (const stage of STAGE_NAMES) {
      for (const name of named) {
        expect(outputs.has(name), `${name} is not an output id of lib/stacks/outputs.ts`).toBe(true);
        expect(Object.keys(templates[stage].Outputs ?? {}), `${stage} has no output ${name}`).toContain(name);
      }
      for (const id of resources) expect(Object.keys(templates[stage].Resources), `${stage}: ${id}`).toContain(id);
    }
  });

  it('no doc lists stack resources with describe-stack-resources (the first 100 only) or uses GNU-only date -d', () => {
    const docs = [
      'README.md',
      ...readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const found = docs.flatMap((doc) => {
      // Commands only: the docs name describe-stack-resources in prose to say why list-stack-resources is used.
      return commands(readFileSync(doc, 'utf8'))
        .filter((c) => /\bdescribe-stack-resources\b/.test(c) || /\bdate (?:-\w+ )*-d\b/.test(c))
        .map((c) => `${doc}: ${c}`);
    });
    expect(found.join('\n'), 'docs with a command that does not work as written').toBe('');
  });
});
