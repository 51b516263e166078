/**
 * Figures in the documents that follow from the route table, the table list or a record's schema, written inline between
 * `<!-- value: <name> -->` and `<!-- /value -->` (invisible in the rendered page, so a figure can sit in a table
 * cell or a sentence) and rewritten with the generated tables (`npm run openapi`; test/contract/docs.test.ts fails
 * on a stale one). A new operation or table changes them without an edit by hand.
 */
import { ROUTES, type Route } from '../../contract/routes.ts';
import { NewPet } from '../../contract/schemas.ts';
import { PLANS } from '../../contract/plans.ts';
import { OPERATIONS_PLAN, pacedCheckMs, pacedPerMinute } from '../../lambdas/hooks/pre-traffic-hook.ts';
import { GATE_MIN_FAILURES, GATE_SIGMAS } from '../config/deploy-gates.ts';
import { STAGES } from '../config/stages.ts';
import { requestUnitCeiling } from '../constructs/data-tables.ts';
import { alarmMetricTotal } from './alarm-metrics.ts';

const thousands = (n: number) => n.toLocaleString('en-US');
/** The per-minute limit of the key the operations' pre-traffic checks send. */
const checkKeyPerMinute = () => PLANS[OPERATIONS_PLAN].limits!.perMinute;
/** The price of one billed metric (custom or alarm), USD a month. */
const PER_CUSTOM_METRIC = 0.3;
const PER_ALARM_METRIC = 0.1;
/** The EMF series per stage besides Powertools' ColdStart (docs/deployment.md, "Cost estimate"). */
const EMF_SERIES = 30;

/** One function per operation, and the authorizer. */
const functions = (routes: readonly Route[]) => routes.length + 1;
const ceiling = (stage: keyof typeof STAGES) => (routes: readonly Route[]) =>
  `${thousands(requestUnitCeiling(STAGES[stage].stageThrottle, routes.length))} units/s`;

const stageThrottle = (stage: keyof typeof STAGES) => () => {
  const t = STAGES[stage].stageThrottle;
  return `${thousands(t.rateLimit)} req/s, burst ${thousands(t.burstLimit)}, per method`;
};
const reserved = (stage: keyof typeof STAGES) => () => thousands(STAGES[stage].authorizerReservedConcurrency);
const wafPerKey = (stage: keyof typeof STAGES) => () =>
  `${thousands(STAGES[stage].wafRequestsPerKeyPer5Minutes)} requests / 5 min`;
/** `a`, `a` and `b`, `a`, `b` and `c`: the fields a body schema takes, as a sentence names them. */
const fieldList = (schema: { readonly shape: object }) => () => {
  const names = Object.keys(schema.shape).map((n) => `\`${n}\``);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
};
const wafPerIp = (stage: keyof typeof STAGES) => () =>
  `${thousands(STAGES[stage].wafRequestsPerIpPer5Minutes)} requests / 5 min`;
const wafListed = (stage: keyof typeof STAGES) => () =>
  `${thousands(STAGES[stage].wafListedRequestsPer5Minutes)} requests / 5 min`;

/**
 * The edge's figures, one value a stage (`<name>-staging`, `<name>-production`): lib/config/capacity.ts sizes them
 * from the account quotas each stage declares.
 */
const EDGE_FIGURES = {
  'stage-throttle': stageThrottle,
  'authorizer-reserved': reserved,
  'waf-per-key': wafPerKey,
  'waf-per-ip': wafPerIp,
  'waf-listed': wafListed,
  'dynamodb-ceiling': ceiling,
} satisfies Record<string, (stage: keyof typeof STAGES) => (routes: readonly Route[]) => string>;
const perStage = (file: string) =>
  Object.fromEntries(
    Object.entries(EDGE_FIGURES).flatMap(([name, render]) =>
      (['staging', 'production'] as const).map((stage) => [`${name}-${stage}`, { file, render: render(stage) }]),
    ),
  );

export const GENERATED_VALUES = {
  ...perStage('docs/keys-and-limits.md'),
  functions: { file: 'docs/performance.md', render: (routes) => String(functions(routes)) },
  'custom-metrics-usd': {
    file: 'docs/performance.md',
    render: (routes) => String(Math.round((EMF_SERIES + functions(routes)) * PER_CUSTOM_METRIC)),
  },
  'alarm-metrics-usd': {
    file: 'docs/performance.md',
    render: (routes) => `about ${Math.round(alarmMetricTotal(routes) * PER_ALARM_METRIC)}`,
  },
  // The fields a pet's create takes (its body schema is strict: any other is refused), where docs/api.md says which
  // are taken: a field added to the schema would otherwise leave the sentence saying it is refused.
  'new-pet-fields': { file: 'docs/api.md', render: fieldList(NewPet) },
  // The deploy gates' bound (lib/config/deploy-gates.ts), where docs/deployment.md states it.
  'gate-sigmas': { file: 'docs/deployment.md', render: () => String(GATE_SIGMAS) },
  'gate-min-failures': { file: 'docs/deployment.md', render: () => String(GATE_MIN_FAILURES) },
  // The pre-traffic check's pace: a read operation's share of the check key's minute, and the time it then takes.
  'check-pace': { file: 'docs/deployment.md', render: () => thousands(pacedPerMinute(checkKeyPerMinute())) },
  'check-minutes': {
    file: 'docs/deployment.md',
    render: () => String(Math.round(pacedCheckMs(checkKeyPerMinute()) / 6_000) / 10),
  },
} as const satisfies Record<string, { file: string; render: (routes: readonly Route[]) => string }>;

const VALUES = /(<!-- value: ([\w-]+) -->)[^<\n]*(<!-- \/value -->)/g;

/** The document with every figure between its markers rewritten; refuses an unknown one, and a missing one. */
export function rewriteValues(file: string, text: string, routes: readonly Route[] = ROUTES): string {
  const expected = Object.entries(GENERATED_VALUES)
    .filter(([, v]) => v.file === file)
    .map(([name]) => name);
  const seen = new Set<string>();
  const out = text.replace(VALUES, (_all, open: string, name: string, close: string) => {
    const v = (GENERATED_VALUES as Record<string, { render: (routes: readonly Route[]) => string }>)[name];
    if (!v || !expected.includes(name)) throw new Error(`${file}: no generated value named "${name}" belongs here`);
    seen.add(name);
    return `${open}${v.render(routes)}${close}`;
  });
  const missing = expected.filter((n) => !seen.has(n));
  if (missing.length) throw new Error(`${file}: the values ${missing.map((n) => `"${n}"`).join(', ')} are missing`);
  return out;
}
