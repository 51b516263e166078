/**
 * `npm run capacity`: every hop a request crosses on a stage, its capacity against the demand the contracts of a
 * customer mix put on it (lib/config/capacity.ts). Exits 1 when a hop of ours is below what the account's ceilings
 * let through (a guard refusing customers inside their contract); ceilings below the mix name the quota increase.
 * Then each plan's usage plan: its figures and what they protect.
 *
 *   npm run capacity -- --customers free=900000,pro=70000,business=25000,enterprise=5000 [--stage production]
 *     [--enterprise 5000/1000000] [-c animal-store:production:lambdaConcurrency=10000]
 */
import { parseArgs } from 'node:util';
import { ROUTES } from '../contract/routes.ts';
import {
  capacityRows,
  capacityTable,
  shortfalls,
  usagePlanTable,
  REFERENCE_MIX,
  type CustomerMix,
} from '../lib/config/capacity.ts';
import { STAGES, STAGE_NAMES, contextProblems, withAccountQuotas, type StageName } from '../lib/config/stages.ts';
import { requestUnitCeiling } from '../lib/constructs/data-tables.ts';

const USAGE =
  'usage: npm run capacity -- [--stage staging|production] [--customers free=N,pro=N,business=N,enterprise=N] [--enterprise <perMinute>/<perDay>] [-c animal-store:<stage>:<quota>=N]';

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function mixOf(customers: string | undefined, enterprise: string | undefined): CustomerMix {
  // Given customers are the whole mix (a plan not named has none); without --customers, the mix we sell.
  const mix: { -readonly [K in keyof CustomerMix]: CustomerMix[K] } = customers
    ? { ...REFERENCE_MIX, free: 0, pro: 0, business: 0, enterprise: 0 }
    : { ...REFERENCE_MIX };
  for (const part of customers ? customers.split(',') : []) {
    const [plan, count] = part.split('=');
    if (!plan || !['free', 'pro', 'business', 'enterprise'].includes(plan) || !/^\d+$/.test(count ?? ''))
      fail(`--customers: "${part}" is not <plan>=<count> (plans free, pro, business, enterprise)`);
    mix[plan as 'free' | 'pro' | 'business' | 'enterprise'] = Number(count);
  }
  if (enterprise) {
    const m = /^(\d+)\/(\d+)$/.exec(enterprise);
    if (!m) fail(`--enterprise: "${enterprise}" is not <perMinute>/<perDay>`);
    mix.enterpriseLimits = { perMinute: Number(m[1]), perDay: Number(m[2]) };
  }
  return mix;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      stage: { type: 'string' },
      customers: { type: 'string' },
      enterprise: { type: 'string' },
      c: { type: 'string', multiple: true },
    },
  });
  const names = values.stage ? [values.stage] : [...STAGE_NAMES];
  for (const n of names) if (!STAGE_NAMES.includes(n as StageName)) fail(`--stage: no stage "${n}"`);
  const context = new Map<string, string>();
  for (const c of values.c ?? []) {
    const i = c.indexOf('=');
    if (i < 0) fail(`-c ${c}: not key=value`);
    context.set(c.slice(0, i), c.slice(i + 1));
  }
  const mix = mixOf(values.customers, values.enterprise);
  let short = 0;
  for (const name of names as StageName[]) {
    const problems = contextProblems(name, (k) => context.get(k));
    if (problems.length) fail(problems.join('\n'));
    const stage = withAccountQuotas(STAGES[name], (k) => context.get(k));
    const rows = capacityRows({ ...stage, tableMaxUnits: requestUnitCeiling(stage.stageThrottle, ROUTES.length) }, mix);
    console.log(
      `\n${stage.stackName}: ${mix.free.toLocaleString('en-US')} Free, ${mix.pro.toLocaleString('en-US')} Pro, ${mix.business.toLocaleString('en-US')} Business, ${mix.enterprise.toLocaleString('en-US')} Enterprise keys (each ${mix.enterpriseLimits.perMinute.toLocaleString('en-US')}/min, ${mix.enterpriseLimits.perDay.toLocaleString('en-US')}/day)\n`,
    );
    console.log(capacityTable(rows));
    console.log(`\nUsage plans (one API key each, shared by every key of the plan):\n\n${usagePlanTable(stage)}`);
    const below = shortfalls(rows);
    short += below.length;
    for (const r of below) console.log(`BELOW THE CONTRACT: ${r.hop} (${r.capacity} < ${r.demand} ${r.unit})`);
  }
  process.exit(short ? 1 : 0);
}
