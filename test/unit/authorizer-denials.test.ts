/**
 * What a flood of forged tokens leaves in the logs: the authorizer adds its denials up in the container and writes
 * their count at most once a minute (TALLY_FLUSH_MS), the first at once, so the dashboard's AuthorizerDenied keeps
 * every denial while a 10,000/s flood writes a line a minute per container, not one per token.
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { TALLY_FLUSH_MS, authorizerHandler } from '../../lambdas/handlers/authorizer.ts';
import { createTelemetry } from '../../lambdas/shared/observability.ts';
import type { Runtime } from '../../lambdas/shared/runtime.ts';

const ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abc/v1/GET/pets';

/** One authorizer container on a clock of the test's, its lines kept. No storage: forged tokens need none. */
function container() {
  const lines: string[] = [];
  const telemetry = createTelemetry(
    { service: 'animal-store', namespace: 'AnimalStore', stage: 'staging', logLevel: 'INFO', metrics: true },
    (l) => lines.push(l),
  );
  const clock = { ms: Date.UTC(2033, 0, 1, 12) };
  const rt = { config: { STAGE: 'staging', AUTH_CACHE_TTL_SECONDS: 60 }, telemetry, now: () => clock.ms };
  const handler = authorizerHandler(rt as unknown as Runtime);
  const k = generateKey();
  const forged = `${k.slice(0, 10)}${k[10] === 'A' ? 'B' : 'A'}${k.slice(11)}`;
  const deny = () => handler({ type: 'TOKEN', authorizationToken: `Bearer ${forged}`, methodArn: ARN }).catch(() => 0);
  const denied = () =>
    lines
      .map((l) => JSON.parse(l) as { AuthorizerDenied?: unknown })
      .reduce((sum, l) => sum + Number(l.AuthorizerDenied ?? 0), 0);
  return { lines, clock, deny, denied };
}

describe("the authorizer's denial count", () => {
  it('a minute of forged tokens, 1,000 a second, writes one line, and the next minute one more with the rest', async () => {
    const c = container();
    const start = c.clock.ms;
    for (let i = 0; i < 60_000; i++) {
      c.clock.ms = start + i;
      await c.deny();
    }
    // The first denial is written at once (a developer's curl shows it), the others wait for the minute.
    expect(c.lines).toHaveLength(1);
    const before = c.lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    c.clock.ms = start + TALLY_FLUSH_MS;
    await c.deny();
    expect(c.lines).toHaveLength(2);
    // Every denial counted, each line one value, not an array of ones: what the dashboard's Sum reads.
    expect(c.denied()).toBe(60_001);
    const last = JSON.parse(c.lines[1]!) as { AuthorizerDenied: unknown; _aws: { CloudWatchMetrics: unknown } };
    expect(last.AuthorizerDenied).toBe(60_000);
    expect(last._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'AnimalStore',
        Dimensions: [['service', 'stage']],
        Metrics: [{ Name: 'AuthorizerDenied', Unit: 'Count' }],
      },
    ]);
    // Under a byte of log per hundred denials, where each wrote a line of its own (about 240 bytes).
    expect(before / 60_000).toBeLessThan(0.01);
  });

  it('a denial after a quiet minute is written at once', async () => {
    const c = container();
    await c.deny();
    await c.deny();
    expect(c.denied()).toBe(1);
    c.clock.ms += 5 * TALLY_FLUSH_MS;
    await c.deny();
    expect(c.lines).toHaveLength(2);
    expect(c.denied()).toBe(3);
  });
});
