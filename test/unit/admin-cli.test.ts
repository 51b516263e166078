import { describe, expect, it } from 'vitest';
import { nextStep, runAdmin } from '../../lib/admin/cli.ts';
import { ADMIN_DYNAMODB, type AdminTarget } from '../../lib/admin/targets.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';

it('tells an admin whose DynamoDB does not answer where to look, in one line and a non-zero exit', async () => {
  const unreachable = () => Promise.reject(new UnavailableError('ECONNREFUSED'));
  const deps = { store: { list: unreachable, listPage: unreachable, getById: unreachable } } as unknown as AdminDeps;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    ['keys', 'list', '--local'],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    async () => deps,
  );
  expect(code).toBe(1);
  expect(out).toEqual([]);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^error: DynamoDB did not answer \(ECONNREFUSED\)\. With --local: is `npm start` running/);
});

it('accepts only the stages the CDK app deploys, and says which before connecting to anything', async () => {
  const err: string[] = [];
  let built = false;
  const code = await runAdmin(
    ['keys', 'list', '--stage', 'dev'],
    { out: () => undefined, err: (l) => err.push(l) },
    () => {
      built = true;
      return Promise.reject(new Error('not reached'));
    },
  );
  expect({ code, built, err }).toEqual({
    code: 1,
    built: false,
    err: [`error: unknown stage "dev" (use ${STAGE_NAMES.join(' or ')})`],
  });
  expect(STAGE_NAMES).toEqual(Object.keys(STAGES));
});

/** Runs the CLI with a target that records whether anything was connected (so nothing can have been written). */
async function refused(argv: string[]): Promise<{ code: number; connected: boolean; err: string[] }> {
  const err: string[] = [];
  let connected = false;
  const code = await runAdmin(argv, { out: () => undefined, err: (l) => err.push(l) }, () => {
    connected = true;
    return Promise.reject(new Error('not reached'));
  });
  return { code, connected, err };
}

it.each([
  [
    ['keys', 'create', '--owner', 'acme\nkey_forged  active  free', '--plan', 'free', '--local'],
    /--owner must be one line/,
  ],
  [['keys', 'create', '--owner', 'acme\u202e', '--plan', 'free', '--local'], /--owner must be one line/],
  [['keys', 'create', '--owner', 'x'.repeat(129), '--plan', 'free', '--local'], /at most 128 characters/],
  [['keys', 'create', '--owner', 'a', '--owner', 'b', '--plan', 'free', '--local'], /--owner is given more than once/],
  [['keys', 'create', '--owner', 'a', '--plan', 'free', '--plan', 'pro', '--local'], /--plan is given more than once/],
  [['keys', 'list', '--plan', 'bogus', '--local'], /unknown plan "bogus"/],
  [['keys', 'list', '--owner', 'a\nb', '--local'], /--owner must be one line/],
  [['keys', 'show', 'key_1', '--owner', 'acme', '--local'], /keys show takes no --owner/],
  [['keys', 'show', 'key_1', 'key_2', '--local'], /unexpected argument "key_2"/],
  [['keys', 'revoke', 'key 1\n', '--local'], /is not a key id/],
  [['keys', 'set-plan', 'key_1', 'bogus', '--local'], /unknown plan "bogus"/],
  [['keys', 'reindex', '--local', '--local'], /--local is given more than once/],
])('refuses %j with one error line and a non-zero exit, before connecting to anything', async (argv, message) => {
  const { code, connected, err } = await refused(argv);
  expect(code).not.toBe(0);
  expect(connected).toBe(false);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^error: /);
  expect(err[0]).toMatch(message);
});

it('says in its help that a rotated secret keeps working until cached authorizer results expire', async () => {
  const out: string[] = [];
  await runAdmin(['--help'], { out: (l) => out.push(l), err: () => undefined }, () => Promise.reject(new Error()));
  expect(out.join('\n')).toMatch(
    /keys rotate <id>.*old secret keeps working until cached authorizer\s+results expire/s,
  );
  expect(out.join('\n')).not.toMatch(/stops working at once/);
});

describe('the next step of a failure', () => {
  const ran = ['keys', 'create', '--owner', 'acme', '--plan', 'free', '--stage', 'staging', '--json'];
  it.each([
    // A read the message names is the next step, on the admin's target.
    ['run `keys show key_1` to see it', ran, 'npm run admin -- keys show key_1 --stage staging'],
    ['see `keys history key_1`', ran, 'npm run admin -- keys history key_1 --stage staging'],
    [
      'copy the `More:` line, or run `keys list --plan pro`',
      ran,
      'npm run admin -- keys list --plan pro --stage staging',
    ],
    // The command line the admin ran, named again (in any order, without target or output options): the rerun.
    [
      'run `keys create --plan free --owner acme`',
      ran,
      'npm run admin -- keys create --owner acme --plan free --stage staging --json',
    ],
    [
      'run `keys issue-check-key` again',
      ['keys', 'issue-check-key', '--stage', 'staging'],
      'npm run admin -- keys issue-check-key --stage staging',
    ],
    // Any other change is the admin's to choose: the next step is a read of the state.
    ['if that one is lost too, run `keys rotate key_9`', ran, 'npm run admin -- keys show key_9 --stage staging'],
    ['revoke the other (run `keys revoke key_2`)', ran, 'npm run admin -- keys show key_2 --stage staging'],
    [
      'run `keys set-plan key_3 pro`',
      ['keys', 'rotate', 'key_3', '--local'],
      'npm run admin -- keys show key_3 --local',
    ],
    [
      'run `keys create --owner acme --plan pro` to make one',
      ['keys', 'rotate', 'key_3', '--local'],
      'npm run admin -- keys show key_3 --local',
    ],
    [
      'run `keys create --owner acme --plan pro --another`',
      ran,
      'npm run admin -- keys list --owner acme --stage staging',
    ],
    ['run `keys remove-release-api-keys`', ['keys', 'list', '--local'], 'npm run admin -- keys list --local'],
    ['nothing to name', ran, null],
  ] as const)('%s (ran %j) → %s', (message, argv, next) => {
    expect(nextStep(message, argv)).toBe(next);
  });

  it('never names a changing command other than the one run, whatever the message names', () => {
    const changing = [
      'create --owner a --plan free',
      'revoke key_1',
      'rotate key_1',
      'ban key_1',
      'set-plan key_1 pro',
    ];
    for (const c of changing)
      for (const argv of [
        ['keys', 'show', 'key_1', '--local'],
        ['keys', 'list', '--local'],
      ]) {
        const next = nextStep(`run \`keys ${c}\``, argv)!;
        expect(next).toMatch(/^npm run admin -- keys (show|list) /);
      }
  });
});

describe('--timeout and --attempts', () => {
  it.each([
    [['--timeout', '0'], /--timeout must be whole seconds from 1 to 900/],
    [['--timeout', '2.5'], /--timeout must be a whole number/],
    [['--attempts', '0'], /--attempts must be a whole number from 1 to 20/],
  ])('refuses %j before connecting to anything', async (extra, message) => {
    const { code, connected, err } = await refused(['keys', 'list', '--local', ...extra]);
    expect({ code, connected }).toEqual({ code: 1, connected: false });
    expect(err[0]).toMatch(message);
  });

  it('reach the target the dependencies are built for, every command taking them; the defaults otherwise', async () => {
    const targets: AdminTarget[] = [];
    const capture = (t: AdminTarget) => {
      targets.push(t);
      return Promise.reject(new Error('stop'));
    };
    await runAdmin(['keys', 'show', 'key_1', '--local', '--timeout', '120', '--attempts', '8'], io(), capture);
    await runAdmin(['keys', 'reindex', '--local'], io(), capture);
    expect(targets.map((t) => t.dynamodb)).toEqual([{ timeoutMs: 120_000, attempts: 8 }, ADMIN_DYNAMODB]);
  });
});

const io = () => ({ out: () => undefined, err: () => undefined });

describe('the production confirmation', () => {
  const record = { keyId: 'key_1', owner: 'acme', plan: 'pro', status: 'active', hash: 'h', createdAt: '2036-01-01' };
  const deps = {
    stage: 'production',
    store: {
      getById: async (id: string) => (id === 'key_1' ? record : undefined),
      listPage: async () => ({ records: [record, { ...record, keyId: 'key_2' }], read: 2 }),
    },
  } as unknown as AdminDeps;
  /** The question asked, answered with `answer`; whether the command was then run (the deps' admin was built). */
  async function asked(argv: string[], answer: string) {
    const questions: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(
      [...argv, '--stage', 'production'],
      { out: () => undefined, err: (l) => err.push(l), ask: async (q) => (questions.push(q), answer) },
      async () => deps,
    );
    return { code, questions, err };
  }

  it.each([
    [['keys', 'revoke', 'key_1'], /^Revoke key_1 \(owner acme, plan pro\) on production\?/],
    [['keys', 'rotate', 'key_1'], /^Rotate key_1 \(owner acme, plan pro\) on production\?/],
  ])('%j names whose key it is before asking for its id', async (argv, question) => {
    const r = await asked(argv, 'wrong');
    expect(r.questions).toHaveLength(1);
    expect(r.questions[0]).toMatch(question);
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/not confirmed: nothing changed/);
  });

  it('revoke --owner names the owner and how many active keys it revokes, and wants the owner typed', async () => {
    const r = await asked(['keys', 'revoke', '--owner', 'acme'], 'key_1');
    // Until the command takes --owner (SHAPES), it is refused as an input error, before any question.
    if (r.questions.length) {
      expect(r.questions[0]).toMatch(
        /^Revoke every active key of owner acme on production: 2 key\(s\) \(key_1, key_2\)\?/,
      );
      expect(r.questions[0]).toContain('Type the owner to confirm');
      expect(r.code).toBe(1);
    } else expect(r.err[0]).toMatch(/takes no --owner|needs a key id/);
  });
});
