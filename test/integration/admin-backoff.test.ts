/**
 * Waiting for API Gateway's control plane (`keys remove-release-api-keys`, the one command that calls it) is bounded
 * and visible: a call AWS keeps throttling backs off at most BACKOFF_CAP_MS at a time and gives up after
 * THROTTLED_ATTEMPTS, every wait of SAY_WAITS_FROM_MS or more is said on stderr before it starts, and `--max-wait`
 * stops the command cleanly, says what is left and the command that finishes it. On the fake control plane
 * (test/helpers/control-plane-fake.ts) with throttling injected in front of it, its simulated clock recording every
 * sleep.
 */
import { DeleteApiKeyCommand, UpdateUsagePlanCommand } from '@aws-sdk/client-api-gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../lib/admin/cli.ts';
import { pacedControlPlane } from '../../lib/admin/release-api-keys.ts';
import {
  BACKOFF_CAP_MS,
  SAY_WAITS_FROM_MS,
  THROTTLED_ATTEMPTS,
  pacedSender,
  type PacingClock,
  type Sender,
  type Waiting,
} from '../../lib/admin/pacing.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { releaseLeftovers } from '../helpers/admin-scenarios.ts';
import { FakeControlPlane } from '../helpers/control-plane-fake.ts';
import { controlPlaneWorld, problems, STAGE } from '../helpers/control-plane-world.ts';

/** AWS as a deploy or another admin makes it: every call throttled until `until`, asking for `retryAfter` seconds. */
function throttling(inner: Sender, clock: PacingClock, retryAfter: string) {
  const state = { until: Number.POSITIVE_INFINITY, throttled: 0 };
  const sender: Sender = {
    send(command) {
      if (clock.now() >= state.until) return inner.send(command);
      state.throttled++;
      const err = Object.assign(new Error('Too Many Requests'), {
        name: 'TooManyRequestsException',
        retryAfterSeconds: retryAfter,
      });
      return Promise.reject(err);
    },
  };
  return { sender, state };
}

/** The fake's clock, recording each sleep and how many lines stderr had when it began. */
function recordingClock(fake: FakeControlPlane, lines: readonly string[]) {
  const sleeps: Array<{ ms: number; linesBefore: number }> = [];
  const clock: PacingClock = {
    now: fake.now,
    sleep: (ms) => {
      sleeps.push({ ms, linesBefore: lines.length });
      return fake.sleep(ms);
    },
  };
  return { clock, sleeps };
}

/** Every sleep is at most the cap, and every long one had its `waiting N s` line printed right before it. */
function expectBoundedAndSaid(sleeps: ReadonlyArray<{ ms: number; linesBefore: number }>, lines: readonly string[]) {
  for (const { ms, linesBefore } of sleeps) {
    expect(ms).toBeLessThanOrEqual(BACKOFF_CAP_MS);
    if (ms < SAY_WAITS_FROM_MS) continue;
    const said = lines[linesBefore - 1] ?? '';
    expect(said, `the line before a ${ms} ms wait`).toMatch(new RegExp(`waiting ${Math.ceil(ms / 1000)} s`));
  }
}

describe('one call AWS keeps throttling', () => {
  it.each([
    ['UpdateUsagePlan', '3600'],
    ['UpdateUsagePlan', '1'],
    ['DeleteApiKey', '30'],
  ])('%s asking %s s: capped waits, each said, then the throttle reaches the caller', async (op, retryAfter) => {
    const fake = new FakeControlPlane(Date.UTC(2036, 10, 22, 12));
    const lines: string[] = [];
    const { clock, sleeps } = recordingClock(fake, lines);
    const { sender, state } = throttling(fake, clock, retryAfter);
    const heard: Waiting[] = [];
    const paced = pacedSender(sender, clock, {
      progress: (w) => (heard.push(w), lines.push(`waiting ${Math.ceil(w.waitMs / 1000)} s`)),
    });
    const command =
      op === 'DeleteApiKey'
        ? new DeleteApiKeyCommand({ apiKey: 'k' })
        : new UpdateUsagePlanCommand({ usagePlanId: 'plan1', patchOperations: [] });
    const start = fake.t;
    await expect(paced.send(command)).rejects.toMatchObject({ name: 'TooManyRequestsException' });
    expect(state.throttled).toBe(THROTTLED_ATTEMPTS);
    expect(fake.t - start).toBeLessThanOrEqual((THROTTLED_ATTEMPTS - 1) * BACKOFF_CAP_MS);
    expectBoundedAndSaid(sleeps, lines);
    expect(heard.every((w) => w.operation === op && w.reason === 'throttled')).toBe(true);
  });
});

describe('commands under throttling, through the command line', () => {
  let api: TestApi;
  let local: AdminDeps;
  beforeAll(async () => {
    ({ api, deps: local } = await startLocalAdmin());
  });
  afterAll(() => api?.close());

  /** What release 3357b0c's tool left on the stage, on a fake that throttles every call from now until `forMs` from now. */
  function throttledRemoval(forMs: number) {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    const err: string[] = [];
    const out: string[] = [];
    const { clock, sleeps } = recordingClock(w.fake, err);
    const { sender, state } = throttling(w.fake, clock, '30');
    state.until = w.fake.t + forMs;
    const run = (...argv: string[]) =>
      runAdmin([...argv, '--stage', STAGE], { out: (l) => out.push(l), err: (l) => err.push(l) }, async (target) => ({
        ...w.deps,
        controlPlane: async () => w.controlPlane(pacedControlPlane(sender, clock, target.pacing)),
      }));
    return { w, err, out, sleeps, run };
  }

  it('--max-wait stops the removal cleanly, says what is left and the command that finishes it; that command does', async () => {
    const { w, err, sleeps, run } = await throttledRemoval(10 * 60_000);
    const inventory = { keys: w.fake.keys.size, plans: w.fake.plans.size };
    expect(await run('keys', 'remove-release-api-keys', '--max-wait', '90')).toBe(1);
    expectBoundedAndSaid(sleeps, err);
    expect(sleeps.reduce((a, s) => a + s.ms, 0)).toBeLessThanOrEqual(90_000);
    expect(err.at(-1)).toMatch(
      /^error: nothing was removed: the stage's usage plans could not be listed \(stopped at --max-wait 90 s .*\): run `keys remove-release-api-keys` again$/,
    );
    expect({ keys: w.fake.keys.size, plans: w.fake.plans.size }, 'nothing deleted').toEqual(inventory);

    w.fake.t += 10 * 60_000;
    expect(await run('keys', 'remove-release-api-keys')).toBe(0);
    expect(await problems(w)).toEqual([]);
  });

  it('with --json, each wait and step is a JSON line on stderr and the failure a JSON object naming the next command', async () => {
    const { err, sleeps, run } = await throttledRemoval(10 * 60_000);
    expect(await run('keys', 'remove-release-api-keys', '--max-wait', '45', '--json')).toBe(1);
    const lines = err.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({
      error: expect.stringMatching(/run `keys remove-release-api-keys` again$/),
      // The command run again, as the admin ran it.
      next: `npm run admin -- keys remove-release-api-keys --max-wait 45 --json --stage ${STAGE}`,
    });
    const waits = lines.slice(0, -1);
    expect(waits.length).toBeGreaterThan(0);
    for (const w of waits) expect(w).toMatchObject({ waiting: { operation: 'GetUsagePlans', reason: 'throttled' } });
    expect(sleeps.filter((s) => s.ms >= SAY_WAITS_FROM_MS)).toHaveLength(waits.length);
  });

  it('a throttle that passes within the cap is waited out, said, and the command succeeds', async () => {
    const { w, err, sleeps, run } = await throttledRemoval(50_000);
    expect(await run('keys', 'remove-release-api-keys')).toBe(0);
    expectBoundedAndSaid(sleeps, err);
    const waits = err.filter((l) => /^waiting \d+ s for API Gateway's control plane/.test(l));
    expect(waits.length).toBeGreaterThan(0);
    // The throttle's waits, then UpdateUsagePlan's own 20 s between the plans it takes off the stage.
    expect(waits[0]).toMatch(/\(AWS throttled GetUsagePlans/);
    expect(waits.every((l) => /\((AWS throttled GetUsagePlans|UpdateUsagePlan keeps to AWS's rate)/.test(l))).toBe(
      true,
    );
    expect(await problems(w)).toEqual([]);
  });
});
