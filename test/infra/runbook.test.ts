/**
 * On-call: every alarm of both stages says what it means and links its section of docs/runbook.md, and every alarm
 * section of the runbook is linked by an alarm of each stage (one-to-one between alarm kinds and sections); the
 * dashboard graphs the requests the web ACL blocks, under the dimensions WAF publishes them with.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALARM_RUNBOOK, RUNBOOK_PATH, slug } from '../../lib/constructs/alarm-runbook.ts';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
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
