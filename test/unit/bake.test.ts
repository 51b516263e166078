/**
 * The bake's decision (lambdas/hooks/bake.ts): how many requests it waits for, what it judges at a look and at the
 * end, and the metric queries its entry sends CloudWatch (the very dimensions the functions publish under).
 */
import { describe, expect, it } from 'vitest';
import {
  BAKE_ALPHA,
  BAKE_EARLY_ALPHA,
  BAKE_EXCESS,
  BAKE_MIN_FAILURES,
  BAKE_POWER,
  MAX_REQUESTS,
  bakeEventSchema,
  SHIFT_SLACK_MS,
  bakePValue,
  canaryWindow,
  judgeBake,
  judgeLook,
  powerAt,
  requestsNeeded,
} from '../../lambdas/hooks/bake.ts';
import { configOf, countQueries, minutesOf } from '../../lambdas/hooks/bake-entry.ts';
import { Duration } from 'aws-cdk-lib';
import { VERSION_DIMENSION, serverErrors } from '../../lib/constructs/version-gates.ts';

/** The previous version's day at `perMinute` requests a minute, failing `rate`. */
const day = (perMinute: number, rate: number) => ({
  requests: perMinute * 1440,
  failures: Math.round(perMinute * 1440 * rate),
});
const counts = (x: number, n: number, old: { requests: number; failures: number }) => ({
  newFailures: x,
  newRequests: n,
  oldFailures: old.failures,
  oldRequests: old.requests,
});

describe('the requests the bake waits for', () => {
  it('are enough to catch a version failing 5 points more in at least 99.5 % of deploys, and no more', () => {
    for (const old of [day(10, 0.001), day(100, 0.001), day(10, 0.01), day(1, 0.001), { requests: 0, failures: 0 }]) {
      const n = requestsNeeded(old);
      expect(powerAt(n, old)).toBeGreaterThanOrEqual(BAKE_POWER);
      expect(powerAt(n - 10, old)).toBeLessThan(BAKE_POWER);
    }
  });

  it('grow with the previous version’s own failures: about 180 at 0.1 %, 330 at 1 %', () => {
    expect(requestsNeeded(day(10, 0.001))).toBe(180);
    expect(requestsNeeded(day(10, 0.01))).toBe(330);
    expect(requestsNeeded(day(10, 0.05))).toBeGreaterThan(requestsNeeded(day(10, 0.01)));
  });

  it('stop at the cap when nothing can be caught (the previous version fails everything)', () => {
    expect(requestsNeeded(day(10, 1))).toBe(MAX_REQUESTS);
  });
});

describe('a look', () => {
  const old = day(10, 0.001);
  const needed = requestsNeeded(old);

  it('waits while the new version has served too few requests and fails no more than expected', () => {
    expect(judgeBake(counts(0, 50, old), needed, false)).toBe('wait');
    expect(judgeBake(counts(2, needed - 1, old), needed, false)).toBe('wait');
  });

  it('stops a version that fails plainly at once, before the requests wanted', () => {
    expect(bakePValue(counts(10, 10, old))).toBeLessThanOrEqual(BAKE_EARLY_ALPHA);
    expect(judgeBake(counts(10, 10, old), needed, false)).toBe('worse');
  });

  it('never judges fewer than the minimum failures worse, whatever the previous version did', () => {
    expect(judgeBake(counts(BAKE_MIN_FAILURES - 1, 20, { requests: 100_000, failures: 0 }), 20, true)).toBe(
      'not-worse',
    );
  });

  it('at the requests wanted: worse at the final level, not worse below it', () => {
    expect(bakePValue(counts(3, needed, old))).toBeLessThanOrEqual(BAKE_ALPHA);
    expect(judgeBake(counts(3, needed, old), needed, false)).toBe('worse');
    expect(judgeBake(counts(1, needed, old), needed, false)).toBe('not-worse');
  });

  it('at the deadline decides on what it has', () => {
    expect(judgeBake(counts(0, 12, old), needed, true)).toBe('not-worse');
    expect(judgeBake(counts(0, 0, old), needed, true)).toBe('not-worse');
    expect(judgeBake(counts(4, 40, old), needed, true)).toBe('worse');
  });

  it('does not hold a new version to more than its predecessor: both failing 1 % passes', () => {
    const old1 = day(10, 0.01);
    expect(judgeBake(counts(Math.round(0.01 * 400), 400, old1), requestsNeeded(old1), false)).toBe('not-worse');
  });

  it('catches at 1 request a minute only what 50 requests can show, and says how often', () => {
    expect(powerAt(50, day(1, 0.001))).toBeLessThan(0.6);
    expect(BAKE_EXCESS).toBe(0.05);
  });
});

describe('the canary’s comparison', () => {
  const M = 60_000;
  /** Minutes 0..11: the canary starts in minute 1 and shifts in minute 11; the new version serves 10 % in between. */
  const rows = (perMinute: number, share: (minute: number) => number, fails: number) =>
    Array.from({ length: 12 }, (_, i) => {
      const requests = Math.round(perMinute * share(i));
      return { start: i * M, requests, failures: Math.round(requests * fails) };
    });
  const newShare = (i: number) => (i === 0 ? 0 : i === 11 ? 0.7 : 0.1);
  const oldShare = (i: number) => 1 - newShare(i);

  it('pools the whole minutes after the canary’s first, up to the minute before the hook started', () => {
    const hookStart = 11 * M + 20_000;
    const end = hookStart - SHIFT_SLACK_MS - ((hookStart - SHIFT_SLACK_MS) % M);
    const w = canaryWindow(rows(1_000, newShare, 0.05), rows(1_000, oldShare, 0.05), end, 20 * M);
    // Minutes 2 to 9: neither the canary's first (partly the previous version alone) nor the shift's.
    expect(w).toEqual({
      new: { requests: 800, failures: 40 },
      old: { requests: 7_200, failures: 360 },
      complete: true,
    });
    expect(canaryWindow(rows(1_000, newShare, 0.05), rows(1_000, oldShare, 0.05), end, 6 * M)).toEqual({
      new: { requests: 400, failures: 20 },
      old: { requests: 3_600, failures: 180 },
      complete: false,
    });
  });

  const day = { requests: 1_440_000, failures: 1_440 };
  const look = (newFails: number, oldFails: number, perMinute = 30_000, complete = true) => {
    const w = canaryWindow(
      rows(perMinute, newShare, newFails),
      rows(perMinute, oldShare, oldFails),
      10 * M,
      complete ? 20 * M : 6 * M,
    );
    return judgeLook({
      canary: w,
      sinceDeploy: { requests: w.new.requests * 3, failures: w.new.failures * 3 },
      day,
      dayNeeded: requestsNeeded(day),
      pastDeadline: false,
    });
  };

  it('judges against the canary when it has the power: an incident failing both versions alike passes', () => {
    expect(look(0.05, 0.05)).toMatchObject({ decision: 'not-worse', baseline: 'canary' });
    expect(look(0.05, 0.05).power).toBeGreaterThanOrEqual(BAKE_POWER);
    expect(look(0.1, 0.05)).toMatchObject({ decision: 'worse', baseline: 'canary' });
  });

  it('falls back to the day before when the canary is too small, and waits while it is still arriving', () => {
    expect(look(0.001, 0.001, 10)).toMatchObject({ baseline: 'day' });
    expect(look(0.001, 0.001, 10, false)).toMatchObject({ decision: 'wait', baseline: undefined });
    // A plain regression in the canary so far stops it at once.
    expect(look(1, 0.001, 100, false)).toMatchObject({ decision: 'worse', baseline: undefined });
  });
});

describe('the continuation’s event', () => {
  it('is CodeDeploy’s event, with the state when the bake continues itself', () => {
    expect(bakeEventSchema.parse({ DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'x' }).bake).toBeUndefined();
    expect(() => bakeEventSchema.parse({ DeploymentId: 'd-1' })).toThrow();
    expect(() =>
      bakeEventSchema.parse({ DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'x', bake: { startedAt: 1 } }),
    ).toThrow();
  });
});

describe('the entry’s CloudWatch queries', () => {
  const custom = { namespace: 'AnimalStore', dimensions: { service: 'animal-store', stage: 'dev' } };
  const window = { functionName: 'fn', alias: 'live', operation: 'createPet', version: '7', from: 0, to: 60_000 };

  it('read the version’s ServerError under the dimensions the gates read it with', () => {
    const q = countQueries(window, custom).find((x) => x.Id === 'serverErrors')!;
    const gate = serverErrors(custom, 'createPet', Duration.minutes(1), '7');
    const dims = Object.fromEntries(q.MetricStat!.Metric!.Dimensions!.map((d) => [d.Name, d.Value]));
    expect(dims).toEqual(gate.dimensions);
    expect(dims[VERSION_DIMENSION]).toBe('7');
    expect(q.MetricStat!.Metric!.Namespace).toBe(gate.namespace);
  });

  it('read Lambda’s counts of the version run through the alias only', () => {
    for (const id of ['invocations', 'errors']) {
      const q = countQueries(window, custom).find((x) => x.Id === id)!;
      expect(q.MetricStat!.Metric!.Namespace).toBe('AWS/Lambda');
      expect(q.MetricStat!.Metric!.Dimensions).toEqual([
        { Name: 'FunctionName', Value: 'fn' },
        { Name: 'Resource', Value: 'fn:live' },
        { Name: 'ExecutedVersion', Value: '7' },
      ]);
      expect(q.MetricStat!.Stat).toBe('Sum');
    }
  });

  it('are read per minute: invocations the requests, Lambda errors and ServerError the failures', () => {
    const t = (m: number) => new Date(m * 60_000);
    expect(
      minutesOf([
        { Id: 'invocations', Timestamps: [t(2), t(1)], Values: [30, 20] },
        { Id: 'errors', Timestamps: [t(1)], Values: [1] },
        { Id: 'serverErrors', Timestamps: [t(1), t(2)], Values: [2, 3] },
      ]),
    ).toEqual([
      { start: 60_000, requests: 20, failures: 3 },
      { start: 120_000, requests: 30, failures: 3 },
    ]);
    expect(() => minutesOf([{ Id: 'errors', StatusCode: 'Forbidden' }])).toThrow(/could not read errors/);
  });

  it('take their configuration from BAKE_CONFIG, and refuse a missing one', () => {
    const c = configOf({ BAKE_CONFIG: JSON.stringify({ functions: [['fn', 'createPet']], ...custom }) });
    expect(c.functions).toEqual({ fn: 'createPet' });
    expect(() => configOf({})).toThrow(/BAKE_CONFIG/);
  });
});
