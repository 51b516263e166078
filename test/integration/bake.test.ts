/**
 * The bake's whole flow (lambdas/hooks/bake.ts) over fake ports: a clock that moves only when the hook sleeps;
 * customers' createPet requests drawn minute by minute (seeded) and routed as CodeDeploy does (the previous version
 * alone for the day before, 10 % of them to the new version in the canary, all after the shift); a CloudWatch that
 * answers from the tally of those requests and holds each minute only once its datapoint has arrived; Lambda's
 * asynchronous invocation of the hook's continuation played by running the hook again with the event it sent
 * (through JSON, as Lambda carries it). CodeDeploy hears exactly one report: Succeeded for a good version, Failed
 * for one failing 5 %, Failed when a port throws.
 */
import { describe, expect, it } from 'vitest';
import {
  BAKE_DEADLINE_MS,
  BAKE_RUN_MS,
  METRICS_LAG_MS,
  bakeEventSchema,
  bakeHook,
  type BakeEvent,
  type BakePorts,
  type CountWindow,
} from '../../lambdas/hooks/bake.ts';
import type { LifecycleHookEvent } from '../../lambdas/hooks/pre-traffic-hook.ts';
// Seeded, so the requests and their failures repeat on every run.
import { binomial, poisson, random } from '../../bench/models/sampling.ts';

const MINUTE = 60_000;
const FUNCTION = 'AnimalStore-dev-CreatePetFunction';
const CURRENT = '6';
const TARGET = '7';
/** When CloudWatch has a minute's counts: Lambda's and the embedded metrics' datapoints, a little under the lag. */
const ARRIVES_AFTER_MS = 2 * MINUTE;

interface Release {
  readonly perMinute: number;
  readonly oldFails: number;
  readonly newFails: number;
  /** From the deployment's creation on, each version fails this share instead (an incident of the stage). */
  readonly incident?: { readonly oldFails: number; readonly newFails: number };
  readonly seed: number;
  /** Replaces ports (a port that throws). */
  readonly ports?: (p: BakePorts) => Partial<BakePorts>;
  /** The AppSpec's versions as ARNs. */
  readonly arns?: boolean;
  readonly functionName?: string;
}

/** A deployment of createPet: the day before, the pre-traffic check's minute, the canary, then the bake. */
async function deployAndBake(release: Release) {
  const rng = random(release.seed);
  const created = Date.UTC(2026, 0, 12, 9, 30, 20);
  const canaryStart = created + MINUTE;
  const shift = canaryStart + 10 * MINUTE;
  let clock = shift;
  // Per clock minute (epoch ms of its start) and version: requests and failures, drawn once, when first needed.
  const tally = new Map<string, { requests: number; failures: number }>();
  const minuteOf = (start: number, version: string) => {
    const key = `${start}/${version}`;
    if (!tally.has(key)) {
      const oldShare = start + MINUTE <= canaryStart ? 1 : start >= shift ? 0 : 0.9;
      const requests = poisson(rng, release.perMinute);
      const toNew = binomial(rng, requests, 1 - oldShare);
      const fails = release.incident && start + MINUTE > created ? release.incident : release;
      tally.set(`${start}/${CURRENT}`, {
        requests: requests - toNew,
        failures: binomial(rng, requests - toNew, fails.oldFails),
      });
      tally.set(`${start}/${TARGET}`, { requests: toNew, failures: binomial(rng, toNew, fails.newFails) });
    }
    return tally.get(key)!;
  };
  const reports: string[] = [];
  const logged: string[] = [];
  const queried: CountWindow[] = [];
  const unavailable: number[] = [];
  const continuations: BakeEvent[] = [];
  const version = (v: string) => (release.arns ? `arn:aws:lambda:us-east-1:123456789012:function:${FUNCTION}:${v}` : v);
  const base: BakePorts = {
    deployment: async () => ({
      appSpec: JSON.stringify({
        version: 0.0,
        Resources: [
          {
            CreatePet: {
              Type: 'AWS::Lambda::Function',
              Properties: {
                Name: release.functionName ?? FUNCTION,
                Alias: 'live',
                CurrentVersion: version(CURRENT),
                TargetVersion: version(TARGET),
              },
            },
          },
        ],
      }),
      createdAt: created,
    }),
    async counts(w) {
      queried.push(w);
      const rows = [];
      for (let m = w.from; m < w.to; m += MINUTE) {
        // A minute CloudWatch does not have yet reads as nothing: the bake would undercount.
        if (m + MINUTE + ARRIVES_AFTER_MS > clock) unavailable.push(m);
        // CloudWatch has no datapoint for a minute with no invocation.
        // No version: every version through the alias, the minute's sum.
        const t =
          w.version === undefined
            ? [CURRENT, TARGET]
                .map((v) => minuteOf(m, v))
                .reduce((x, y) => ({ requests: x.requests + y.requests, failures: x.failures + y.failures }), {
                  requests: 0,
                  failures: 0,
                })
            : minuteOf(m, w.version);
        if (t.requests > 0) rows.push({ start: m, ...t });
      }
      return rows;
    },
    report: async (_e: LifecycleHookEvent, status) => void reports.push(status),
    continueLater: async (e) => void continuations.push(e),
    log: (line) => void logged.push(line),
    now: () => clock,
    sleep: async (ms) => void (clock += ms),
  };
  const ports = { ...base, ...release.ports?.(base) };
  const config = { functions: { [FUNCTION]: 'createPet' } };
  const runs: number[] = [];
  let event: BakeEvent = { DeploymentId: 'd-BAKE', LifecycleEventHookExecutionId: 'hook-1' };
  for (;;) {
    const started = clock;
    const outcome = await bakeHook(event, ports, config);
    runs.push(clock - started);
    if (outcome.status !== 'Continued') break;
    // Lambda carries the continuation's event as JSON; the entry parses it.
    event = bakeEventSchema.parse(JSON.parse(JSON.stringify(continuations.at(-1))));
    if (runs.length > 10) throw new Error('the bake never decided');
  }
  return { reports, logged, queried, unavailable, runs, minutes: (clock - shift) / MINUTE, tally };
}

describe('at 10 creates a minute', () => {
  it('a good version: Succeeded, after about 20 minutes, continuing itself once past an invocation’s time', async () => {
    const r = await deployAndBake({ perMinute: 10, oldFails: 0.001, newFails: 0.001, seed: 1 });
    expect(r.reports).toEqual(['Succeeded']);
    expect(r.runs.length).toBeGreaterThanOrEqual(2);
    for (const ms of r.runs) expect(ms).toBeLessThanOrEqual(BAKE_RUN_MS);
    expect(r.minutes).toBeGreaterThan(15);
    expect(r.minutes).toBeLessThan(30);
    expect(r.unavailable).toEqual([]);
    expect(r.logged.at(-1)).toMatch(/Succeeded: the new version fails no more often/);
  });

  it('a version failing 5 %: Failed, and the log says by how much', async () => {
    const r = await deployAndBake({ perMinute: 10, oldFails: 0.001, newFails: 0.051, seed: 2 });
    expect(r.reports).toEqual(['Failed']);
    expect(r.minutes).toBeLessThan(30);
    expect(r.logged.at(-1)).toMatch(/Failed: the new version fails more often than the previous one: \d+ failures/);
  });

  it('a version failing every request: Failed at the first look after the shift', async () => {
    const r = await deployAndBake({ perMinute: 10, oldFails: 0.001, newFails: 1, seed: 3 });
    expect(r.reports).toEqual(['Failed']);
    expect(r.minutes).toBe(0);
  });

  it('compares the new version since the deployment with every version through live over the day before: the canary is too small', async () => {
    const r = await deployAndBake({ perMinute: 10, oldFails: 0.001, newFails: 0.001, seed: 4 });
    const created = Date.UTC(2026, 0, 12, 9, 30);
    // The day before: every version through the alias (a previous version live for minutes has too few requests).
    const day = r.queried.filter((w) => w.version === undefined);
    expect(day).toEqual([
      expect.objectContaining({ from: created - 24 * 60 * MINUTE, to: created, alias: 'live', operation: 'createPet' }),
    ]);
    // The canary's minutes, read until they are all in (the minute before the hook's start: before the shift).
    const old = r.queried.filter((w) => w.version === CURRENT);
    const shift = created + 11 * MINUTE + 20_000;
    for (const w of old) {
      expect(w.from).toBe(created);
      expect(w.to).toBeLessThanOrEqual(shift - 20_000 - MINUTE);
    }
    expect(old.length).toBeLessThanOrEqual(4);
    for (const w of r.queried.filter((q) => q.version === TARGET)) {
      expect(w.from).toBe(created);
      expect(w.to % MINUTE).toBe(0);
    }
    expect(r.logged.at(-1)).toMatch(/against \d+ of \d+ \(every version through live the day before/);
  });

  it('reads the versions as CloudWatch names them when the AppSpec gives ARNs', async () => {
    const r = await deployAndBake({ perMinute: 10, oldFails: 0.001, newFails: 0.001, seed: 5, arns: true });
    expect(new Set(r.queried.map((w) => w.version))).toEqual(new Set([undefined, CURRENT, TARGET]));
    expect(r.reports).toEqual(['Succeeded']);
  });
});

describe('at 3,000 creates a minute, with an incident of the stage from the deployment on (both failing 5 %)', () => {
  it('a good version: Succeeded, judged against the previous version in the canary, not the quiet day before', async () => {
    const r = await deployAndBake({
      perMinute: 3_000,
      oldFails: 0.001,
      newFails: 0.001,
      incident: { oldFails: 0.05, newFails: 0.05 },
      seed: 12,
    });
    expect(r.reports).toEqual(['Succeeded']);
    expect(r.logged.at(-1)).toMatch(/against \d+ of \d+ \(the previous version in the canary\)/);
    expect(r.minutes).toBeLessThanOrEqual(2);
    expect(r.unavailable).toEqual([]);
  });

  it('a version failing 5 points more than the previous one in the same incident: Failed', async () => {
    const r = await deployAndBake({
      perMinute: 3_000,
      oldFails: 0.001,
      newFails: 0.001,
      incident: { oldFails: 0.05, newFails: 0.1 },
      seed: 13,
    });
    expect(r.reports).toEqual(['Failed']);
    expect(r.logged.at(-1)).toMatch(/fails more often than the previous one: .*\(the previous version in the canary\)/);
  });

  it('counts the previous version from the canary’s first whole minute, not the minutes it served alone', async () => {
    const r = await deployAndBake({
      perMinute: 3_000,
      oldFails: 0.001,
      newFails: 0.001,
      incident: { oldFails: 0.05, newFails: 0.05 },
      seed: 14,
    });
    const created = Date.UTC(2026, 0, 12, 9, 30);
    // The canary started at 9:31:20 and shifted at 9:41:20: its whole minutes are 9:32 to 9:40.
    const judged = Number(r.logged.at(-1)!.match(/against \d+ of (\d+) \(the previous version in the canary\)/)![1]);
    const previousFrom = (from: number, to: number) => {
      let sum = 0;
      for (let m = created + from * MINUTE; m < created + to * MINUTE; m += MINUTE)
        sum += r.tally.get(`${m}/${CURRENT}`)?.requests ?? Number.NaN;
      return sum;
    };
    const ends = [3, 4, 5, 6, 7, 8, 9, 10].filter((to) => previousFrom(2, to) === judged);
    expect(ends).toHaveLength(1);
  });
});

it('at 100 creates a minute it decides within minutes of the shift', async () => {
  const r = await deployAndBake({ perMinute: 100, oldFails: 0.001, newFails: 0.001, seed: 6 });
  expect(r.reports).toEqual(['Succeeded']);
  expect(r.minutes).toBeLessThanOrEqual(METRICS_LAG_MS / MINUTE + 3);
  expect(r.runs).toHaveLength(1);
});

it('at 1 create a minute it decides at the deadline on what it has, and says so', async () => {
  const r = await deployAndBake({ perMinute: 1, oldFails: 0.001, newFails: 0.001, seed: 7 });
  expect(r.reports).toEqual(['Succeeded']);
  expect(r.minutes).toBe(BAKE_DEADLINE_MS / MINUTE);
  expect(r.logged.at(-1)).toMatch(/decided at the deadline on \d+ of the \d+ requests wanted.*caught in about/);
  expect(r.runs.length).toBeGreaterThanOrEqual(5);
});

describe('every failure of the bake itself reports Failed', () => {
  it('CloudWatch failing at a later look', async () => {
    let calls = 0;
    const r = await deployAndBake({
      perMinute: 10,
      oldFails: 0.001,
      newFails: 0.001,
      seed: 8,
      ports: (p) => ({
        counts: async (w) => {
          if (++calls === 5) throw new Error('ThrottlingException: Rate exceeded');
          return p.counts(w);
        },
      }),
    });
    expect(r.reports).toEqual(['Failed']);
    expect(r.logged.at(-1)).toMatch(/the bake itself failed: ThrottlingException/);
  });

  it('the continuation not invoked', async () => {
    const r = await deployAndBake({
      perMinute: 10,
      oldFails: 0.001,
      newFails: 0.001,
      seed: 9,
      ports: () => ({
        continueLater: async () => {
          throw new Error('AccessDeniedException');
        },
      }),
    });
    expect(r.reports).toEqual(['Failed']);
    expect(r.runs).toHaveLength(1);
  });

  it('the deployment unreadable', async () => {
    const r = await deployAndBake({
      perMinute: 10,
      oldFails: 0.001,
      newFails: 0.001,
      seed: 10,
      ports: () => ({
        deployment: async () => {
          throw new Error('DeploymentDoesNotExistException');
        },
      }),
    });
    expect(r.reports).toEqual(['Failed']);
  });

  it('a function the bake does not judge', async () => {
    const r = await deployAndBake({
      perMinute: 10,
      oldFails: 0.001,
      newFails: 0.001,
      seed: 11,
      functionName: 'SomeoneElsesFunction',
    });
    expect(r.reports).toEqual(['Failed']);
    expect(r.logged.at(-1)).toMatch(/SomeoneElsesFunction is not one of the functions the bake judges/);
  });
});
