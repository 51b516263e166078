/**
 * The admin tool's help and its errors for scripts: `keys <command> --help` prints that command's usage with exactly
 * the options the command takes (derived from SHAPES), and with `--json` every failure is one JSON object on stderr
 * naming the next command, even when the command line does not parse.
 */
import { expect, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { runAdmin } from '../../lib/admin/cli.ts';
import { SHAPES } from '../../lib/admin/commands.ts';
import { commandUsage, synopsis, undocumented } from '../../lib/admin/help.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';

async function run(argv: string[], deps?: Partial<AdminDeps>) {
  const out: string[] = [];
  const err: string[] = [];
  let connected = false;
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, async () => {
    connected = true;
    if (!deps) throw new Error('not reached');
    return deps as AdminDeps;
  });
  return { code, out: out.join('\n'), err, connected };
}

it('keys set-plan --help prints that command’s usage, not the whole list, and connects to nothing', async () => {
  const r = await run(['keys', 'set-plan', '--help']);
  expect(r).toMatchObject({ code: 0, err: [], connected: false });
  expect(r.out.split('\n')[0]).toMatch(
    /^Usage: npm run admin -- keys set-plan <id> <plan> \[--per-minute N\] \[--per-day N\]/,
  );
  expect(r.out).toMatch(/once cached authorizer results expire/);
  expect(r.out).not.toMatch(/keys create|--owner/);
  expect((await run(['keys', 'list', '-h'])).out).toMatch(/^Usage: npm run admin -- keys list \[--plan <plan>\]/);
  expect((await run(['keys', 'nope', '--help'])).out).toMatch(/^Usage: npm run admin -- <command>/);
});

it('every command and option has help, and each synopsis offers exactly the options its command takes', () => {
  expect(undocumented()).toEqual([]);
  for (const [command, shape] of Object.entries(SHAPES)) {
    const offered = [...synopsis(command).matchAll(/--([a-z-]+)/g)].map((m) => m[1]!);
    expect(offered.sort(), command).toEqual([...shape.options].sort());
    const words = synopsis(command).split(' ');
    const args = words.filter((w, i) => /^\[?<[a-z]+>\]?$/.test(w) && !/^\[?--/.test(words[i - 1]!));
    expect(args.length, command).toBe(shape.positionals);
    expect(commandUsage(command), command).toContain(`keys ${command}`);
  }
});

it('with --json, a refused command line is one JSON object on stderr with the help to read next', async () => {
  const bad = await run(['keys', 'list', '--plan', 'bogus', '--local', '--json']);
  expect(bad).toMatchObject({ code: 1, out: '', connected: false });
  expect(bad.err.map((l) => JSON.parse(l))).toEqual([
    { error: 'unknown plan "bogus" (use free, pro, business, enterprise)', next: 'npm run admin -- keys list --help' },
  ]);
  const unparsed = await run(['keys', 'list', '--bogus', '--json']);
  expect(unparsed.err.map((l) => JSON.parse(l))).toEqual([
    { error: 'unknown option --bogus (see --help)', next: 'npm run admin -- --help' },
  ]);
  const wait = await run(['keys', 'remove-release-api-keys', '--stage', 'staging', '--max-wait', 'soon', '--json']);
  expect(JSON.parse(wait.err[0]!)).toMatchObject({ error: '--max-wait must be a whole number' });
});

it('with --json, a failure past the checks is JSON too: DynamoDB not answering names the same command to run again', async () => {
  const unreachable = () => Promise.reject(new UnavailableError('ECONNREFUSED'));
  const r = await run(['keys', 'show', 'key_0123456789abcdef', '--local', '--json'], {
    store: { getById: unreachable } as unknown as AdminDeps['store'],
  });
  expect(r).toMatchObject({ code: 1, out: '', connected: true });
  expect(r.err).toHaveLength(1);
  const parsed = JSON.parse(r.err[0]!) as { error: string; next: string };
  expect(parsed.error).toMatch(/^DynamoDB did not answer \(ECONNREFUSED\)/);
  expect(parsed.next).toBe('npm run admin -- keys show key_0123456789abcdef --local --json');
});

it('keys issue-check-key --help says why the secret is not printed, and --local is refused before connecting', async () => {
  const help = await run(['keys', 'issue-check-key', '--help']);
  expect(help).toMatchObject({ code: 0, connected: false });
  expect(help.out.split('\n')[0]).toMatch(/^Usage: npm run admin -- keys issue-check-key \[--show\]/);
  expect(help.out).toMatch(
    /--show {4,}print the secret too; without it the secret is not printed: it lives in Secrets/,
  );
  expect(help.out).toMatch(/secretsmanager:CreateSecret, PutSecretValue, DescribeSecret\s+and GetSecretValue/);
  expect((await run(['--help'])).out).toMatch(/^ {2}keys issue-check-key \[--show\]$/m);
  const local = await run(['keys', 'issue-check-key', '--local', '--json']);
  expect(local).toMatchObject({ code: 1, out: '', connected: false });
  expect(JSON.parse(local.err[0]!)).toMatchObject({
    error: expect.stringContaining("a stage's Secrets Manager, which --local has none of"),
  });
});
