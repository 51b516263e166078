/**
 * What docs/deployment.md, docs/keys-and-limits.md and the README tell a platform engineer about deploying, checked against the code: the
 * first-deploy switch and the walk back from a failed first deploy, the preflight command, and which limits are
 * exact (the function's limiter) and which are AWS's best effort (everything the gateway enforces).
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const deployment = read('docs/deployment.md');
const readme = read('README.md');
const keysAndLimits = read('docs/keys-and-limits.md');

/** The text of a section, from its heading to the next heading of the same or a higher level (code blocks skipped). */
function section(doc: string, heading: string): string {
  const lines = doc.split('\n');
  let fenced = false;
  const headingLevel = lines.map((l) => {
    if (l.startsWith('```')) fenced = !fenced;
    return !fenced && /^#+ /.test(l) ? l.indexOf(' ') : 0;
  });
  const start = lines.findIndex((l, i) => headingLevel[i]! > 0 && l.replace(/^#+ /, '') === heading);
  expect(start, `section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = headingLevel.findIndex((h, i) => i > start && h > 0 && h <= headingLevel[start]!);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

it('walks a failed first deploy back to a clean retry, command by command, with the switch the app reads', () => {
  const text = section(deployment, 'A failed first deploy');
  for (const name of ['production', 'account']) expect(text).toContain(`-c ${firstDeployContextKey(name)}=true`);
  // The walk back when the switch was forgotten, in the order it must run.
  const steps = [
    // The one command first; the shell sequence after it says what it does.
    'npm run walk-back -- --stage production $PROD',
    'update-termination-protection --no-enable-termination-protection',
    'list-stack-resources --stack-name $STACK',
    'update-table --table-name "$T" --no-deletion-protection-enabled',
    // RetainExceptOnCreate keeps a table whose creating rollback failed: delete-stack would leave it.
    'delete-table --table-name "$T"',
    'delete-stack --stack-name $STACK',
    'wait stack-delete-complete',
    `npx cdk deploy $STACK $PROD -c ${firstDeployContextKey('production')}=true`,
  ];
  const at = steps.map((s) => text.indexOf(s));
  expect(
    at.every((i) => i >= 0),
    JSON.stringify(steps.filter((_, i) => at[i]! < 0)),
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
  // No longer the claim that a protected first deploy leaves nothing behind.
  expect(deployment).not.toContain('a failed first deploy leaves no orphans behind');
});

it('documents npm run preflight in the deploy steps and the README, and package.json runs it', () => {
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  expect(pkg.scripts.preflight).toBe('node scripts/preflight.ts');
  expect(pkg.scripts['walk-back']).toBe('node scripts/walk-back.ts');
  expect(section(deployment, 'Deploy')).toMatch(/npm run preflight -- --stage staging --previous /);
  expect(section(readme, 'Deploying a stage')).toMatch(/npm run preflight -- --stage production /);
});

it('separates what is exact (the limiter) from what is AWS best effort (usage plans, spent-key refusals)', () => {
  const text = section(keysAndLimits, "What is exact and what is AWS's best effort");
  const rows = text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Limit') && !l.startsWith('|---'));
  const verdict = (what: RegExp) => {
    const row = rows.find((r) => what.test(r.split('|')[1]!));
    expect(row, String(what)).toBeDefined();
    return row!.split('|')[3]!;
  };
  expect(verdict(/per-minute and per-day limits/)).toMatch(/\*\*Exact\*\*/);
  expect(verdict(/Usage-plan throttle .* quota/)).toMatch(/\*\*Best effort\*\*/);
  expect(verdict(/Spent-key refusals/)).toMatch(/\*\*Best effort\*\*/);
});

it('says what traffic proves a staging rollback and how to drive it', () => {
  const text = section(deployment, 'Proving the rollback');
  // The traffic at which the operation gate catches a version failing every request (the gate-rates table).
  expect(text).toMatch(/about 30 calls a minute/);
  expect(text).toMatch(/curl /);
});

/** Every shell command the docs give: code-block lines and inline code, continuation lines joined. */
function commands(doc: string): string[] {
  const blocks = [...doc.matchAll(/```(?:sh)?\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ' '));
  const inline = [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  return [...blocks.flatMap((b) => b.split('\n')), ...inline.map((c) => c.replace(/\n\s*/g, ' '))];
}

it("never finds a stack's resources with describe-stack-resources, which stops at the first 100", () => {
  for (const [name, doc] of [
    ['docs/deployment.md', deployment],
    ['README.md', readme],
  ] as const) {
    const truncating = commands(doc).filter((c) => /aws cloudformation describe-stack-resources/.test(c));
    expect(truncating, name).toEqual([]);
  }
  // The walk-back, the function names and the destroy find resources by the call that pages through them all.
  expect(section(deployment, 'A failed first deploy')).toContain('aws cloudformation list-stack-resources');
  expect(section(deployment, 'Watching a canary')).toContain('aws cloudformation list-stack-resources');
  expect(section(deployment, 'Destroying a stack')).toContain('aws cloudformation list-stack-resources');
});

it('destroys a stack without taking its dependents, after what the admin tool made at the gateway', () => {
  const text = section(deployment, 'Destroying a stack');
  // cdk destroy takes a stack's dependents unless --exclusively: both stages depend on the account stack.
  const accountDestroys = commands(deployment).filter((c) => /cdk destroy AnimalStore-account/.test(c));
  expect(accountDestroys.length).toBeGreaterThan(0);
  for (const c of accountDestroys) expect(c).toMatch(/--exclusively/);
  // The admin tool's plans and keys are listed and removed before the stack goes.
  const order = [
    'aws apigateway get-usage-plans',
    'delete-api-key',
    'delete-usage-plan',
    'npx cdk destroy AnimalStore-staging',
  ];
  const at = order.map((s) => text.indexOf(s));
  expect(
    at.every((i) => i >= 0),
    JSON.stringify(order.filter((_, i) => at[i]! < 0)),
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
});
