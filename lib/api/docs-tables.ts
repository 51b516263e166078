/**
 * The docs' tables that restate the route entries, rendered from them in this one place. Each sits in its document
 * between `<!-- generated: <name> -->` and `<!-- /generated -->`; `npm run openapi` rewrites what is between the
 * markers (so adding an operation edits no document by hand) and test/contract/docs.test.ts fails when a committed
 * document differs from its rewrite.
 *
 * Plain data, like the OpenAPI document it reads: no CDK and no Lambda runtime imports.
 */
import { GENERATED_VALUES, rewriteValues } from './docs-figures.ts';
import { headerDoc } from '../../contract/headers.ts';
import { fieldsOf } from '../../contract/request-fields.ts';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { AUTHORIZER, ROUTES, type FunctionAccess, type Route } from '../../contract/routes.ts';
import { alarmMetricTotal, alarmMetrics } from './alarm-metrics.ts';
import { errorCodesSummary, errorCodesTable } from './error-tables.ts';
import { capacityRows, capacityTable, usagePlanTable, REFERENCE_MIX } from '../config/capacity.ts';
import { STAGES, type StageName } from '../config/stages.ts';
import { requestUnitCeiling } from '../constructs/data-tables.ts';
import { buildOpenApi, named } from './openapi.ts';

const code = (s: string) => `\`${s}\``;
/** A table cell: a pipe would end it, a newline the row. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
const table = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [row(header), `|${header.map(() => '---|').join('')}`, ...rows.map(row)].join('\n');

function permissions(access: FunctionAccess): string {
  const grants = access.tables.map((g) => {
    const actions = g.actions.map((a) => code(a.replace(/^dynamodb:/, ''))).join(', ');
    const on = g.index ? `${g.table.id} index ${code(g.index)}` : g.table.id;
    return `${actions} on ${on}${g === LIMITER_GRANT ? ' (rate limiter)' : ''}`;
  });
  return [
    ...grants,
    ...(access.cursorSecret ? ['`GetSecretValue` on the cursor secret (its ARN as `CURSOR_SECRET_ARN`)'] : []),
  ].join('; ');
}

/** docs/deployment.md, "Least privilege": what each function may touch, from `access` on its entry. */
export function leastPrivilegeTable(routes: readonly Route[] = ROUTES): string {
  return table(
    ['Function', 'Permissions'],
    [[AUTHORIZER.name, permissions(AUTHORIZER.access)], ...routes.map((r) => [r.operationId, permissions(r.access)])],
  );
}

type HeaderObject = { description?: string; $ref?: string };
/** The parts of the OpenAPI document the tables read. */
type OpenApiDoc = {
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, HeaderObject> }> }>>;
  components?: { headers?: Record<string, HeaderObject> };
};

/** docs/api.md, "Statuses per operation": every status each operation may answer, from the OpenAPI document. */
export function statusesTable(routes: readonly Route[] = ROUTES, doc = buildOpenApi(routes) as OpenApiDoc): string {
  return table(
    ['Operation', 'Route', 'Statuses'],
    routes.map((r) => [
      code(r.operationId),
      code(`${r.method} ${r.path}`),
      Object.keys(doc.paths[r.path]![r.method.toLowerCase()]!.responses).join(', '),
    ]),
  );
}

/** Where a header is sent: on every response, on the same statuses of every operation, or operation by operation. */
function sentOn(on: ReadonlyMap<string, readonly string[]>, all: ReadonlyMap<string, readonly string[]>): string {
  const everywhere = (op: string) => on.get(op)?.length === all.get(op)!.length;
  if ([...all.keys()].every(everywhere)) return 'every response';
  const statuses = [...on.values()].map((s) => s.join(', '));
  if (on.size === all.size && statuses.every((s) => s === statuses[0])) return statuses[0]!;
  return [...on].map(([op, s]) => `${code(op)} ${everywhere(op) ? '(every response)' : s.join(', ')}`).join('; ');
}

/**
 * docs/api.md, "Headers": every response header the OpenAPI document declares, where it is sent and what it says.
 * Headers of one name that mean different things (`Link`) get a row each; headers sent in the same places with
 * descriptions that differ only by name (the rate-limit headers) stay a row each too, in the document's order.
 */
export function headersTable(routes: readonly Route[] = ROUTES, doc = buildOpenApi(routes) as OpenApiDoc): string {
  const all = new Map<string, string[]>();
  const rows = new Map<string, { name: string; description: string; on: Map<string, string[]> }>();
  for (const r of routes) {
    const op = `${r.method} ${r.path}`;
    const responses = doc.paths[r.path]![r.method.toLowerCase()]!.responses;
    all.set(op, Object.keys(responses));
    for (const [status, response] of Object.entries(responses))
      for (const [name, given] of Object.entries(response.headers ?? {})) {
        const h = given.$ref ? doc.components!.headers![given.$ref.split('/').pop()!]! : given;
        const description = h.description ?? '';
        const key = `${name}\n${description}`;
        const entry = rows.get(key) ?? { name, description, on: new Map<string, string[]>() };
        rows.set(key, entry);
        entry.on.set(op, [...(entry.on.get(op) ?? []), status]);
      }
  }
  return table(
    ['Header', 'On', 'Value'],
    [...rows.values()].map((h) => [code(h.name), sentOn(h.on, all), cell(h.description)]),
  );
}

/** What a request carries beyond the path: its body schema, query parameters and headers, from the entry. */
function input(r: Route): string {
  const body = r.request.body ? [`body ${code(named(r.request.body, `${r.operationId} request body`))}`] : [];
  const params = (['query', 'headers'] as const)
    .map(
      (where) => [where === 'headers' ? 'header' : where, Object.keys(fieldsOf(r.request[where])).map(code)] as const,
    )
    .filter(([, names]) => names.length)
    .map(([where, names]) => `${where} ${names.join(', ')}`);
  return [...body, ...params].join('; ') || '—';
}

/** The success status and body schema (or none), with the headers it adds. */
function answer(r: Route): string {
  const ok = r.success;
  if (!ok) return r.notImplemented ? '501 `not_implemented`' : '—';
  const body = ok.schema ? code(named(ok.schema, `${r.operationId} response`)) : 'no body';
  const texts = (ok.headers ?? []).map(headerDoc).map((h) => h.text ?? code(h.name));
  return `${ok.status} ${body}${texts.length ? ` with ${texts.join(', ')}` : ''}`;
}

/** The description, then what sets the operation apart (deprecation, no contract yet). */
function notes(r: Route): string {
  if (r.notImplemented) return cell(`${r.summary}: exists in the spec without a contract.`);
  const d = r.deprecation;
  const deprecated = d
    ? ` **Deprecated**: \`Sunset: ${new Date(d.sunsetAt).toUTCString()}\`, 410 from then on; use ${d.instead}.`
    : '';
  return cell(`${r.description ?? `${r.summary}.`}${deprecated}`);
}

/** README.md, "The API in brief": one row per operation, in the route table's order. */
export function operationsTable(routes: readonly Route[] = ROUTES): string {
  return table(
    ['Route', 'Operation', 'Input', 'Answer', 'Notes'],
    routes.map((r) => [code(`${r.method} ${r.path}`), code(r.operationId), input(r), answer(r), notes(r)]),
  );
}

/** docs/deployment.md, "Alarms": the billed alarm metrics of a stage, counted from the routes (alarm-metrics.ts). */
export function alarmMetricsTable(routes: readonly Route[] = ROUTES): string {
  const rows = alarmMetrics(routes);
  return table(
    ['Alarm', 'Billed metrics', 'Of'],
    [
      ...rows.map((r) => [r.alarm, String(r.metrics), cell(r.detail)]),
      ['**All, per stage**', `**${alarmMetricTotal(routes)}**`, '0.10 USD a month each'],
    ],
  );
}

/** The capacity model's rows for a stage at the reference mix (lib/config/capacity.ts), as `npm run capacity` prints them. */
function capacityOf(stage: StageName, routes: readonly Route[]) {
  const s = STAGES[stage];
  return capacityRows({ ...s, tableMaxUnits: requestUnitCeiling(s.stageThrottle, routes.length) }, REFERENCE_MIX);
}

/** docs/deployment.md, "Capacity": every hop of production at the reference mix, under AWS's default quotas. */
export const capacityHopsTable = (routes: readonly Route[] = ROUTES): string =>
  capacityTable(capacityOf('production', routes));

/** README: the account ceilings at the reference mix, and what to ask for; our own hops' count at or above it. */
export function capacityCeilingsTable(routes: readonly Route[] = ROUTES): string {
  const rows = capacityOf('production', routes);
  const ours = rows.filter((r) => !r.ceiling);
  return [
    capacityTable(rows.filter((r) => r.ceiling)),
    '',
    `Our own hops at or above what these ceilings let through: ${ours.filter((r) => r.headroom >= 1).length} of ${ours.length}.`,
  ].join('\n');
}

/** A generated table: the document it lives in (from the repository root) and how it renders. */
export interface GeneratedTable {
  readonly file: string;
  readonly render: (routes?: readonly Route[]) => string;
}

/** Every generated table lib/ renders, by the name its markers carry. */
export const GENERATED_TABLES = {
  operations: { file: 'README.md', render: operationsTable },
  'error-codes': { file: 'README.md', render: errorCodesSummary },
  errors: { file: 'docs/api.md', render: errorCodesTable },
  headers: { file: 'docs/api.md', render: headersTable },
  statuses: { file: 'docs/api.md', render: statusesTable },
  'least-privilege': { file: 'docs/architecture.md', render: leastPrivilegeTable },
  'alarm-metrics': { file: 'docs/runbook.md', render: alarmMetricsTable },
  capacity: { file: 'docs/architecture.md', render: capacityHopsTable },
  // Both stages size their usage plans alike under AWS's default quotas (test/unit/capacity.test.ts).
  'usage-plans': { file: 'docs/keys-and-limits.md', render: () => usagePlanTable(STAGES.production) },
  'capacity-ceilings': { file: 'docs/keys-and-limits.md', render: capacityCeilingsTable },
} as const satisfies Record<string, GeneratedTable>;

/**
 * Tables the docs generator adds from outside lib/ (scripts/openapi.ts: the deploy models' measured rates, from
 * bench/models/). lib/ ships, so it never imports the models.
 */
const addedTables: Record<string, GeneratedTable> = {};

export function addGeneratedTables(tables: Readonly<Record<string, GeneratedTable>>): void {
  for (const name of Object.keys(tables))
    if (name in GENERATED_TABLES) throw new Error(`generated table "${name}" is lib's own`);
  Object.assign(addedTables, tables);
}

const allTables = (): Record<string, GeneratedTable> => ({ ...GENERATED_TABLES, ...addedTables });

const MARKERS = /(<!-- generated: ([\w-]+) -->\n)[\s\S]*?(\n<!-- \/generated -->)/g;

/**
 * The document with every generated table between its markers rewritten from the routes. Refuses a marker that
 * names no table, and a document that lacks one of the tables that belong in it, so a moved marker is noticed.
 */
export function rewriteGenerated(file: string, text: string, routes: readonly Route[] = ROUTES): string {
  const tables = allTables();
  const expected = Object.entries(tables)
    .filter(([, t]) => t.file === file)
    .map(([name]) => name);
  const seen: string[] = [];
  const out = text.replace(MARKERS, (_all, open: string, name: string, close: string) => {
    const t = tables[name];
    if (!t || !expected.includes(name)) throw new Error(`${file}: no generated table named "${name}" belongs here`);
    seen.push(name);
    return `${open}${t.render(routes)}${close}`;
  });
  const missing = expected.filter((n) => !seen.includes(n));
  if (missing.length)
    throw new Error(`${file}: the markers of ${missing.map((n) => `"${n}"`).join(', ')} are missing or unclosed`);
  return rewriteValues(file, out, routes);
}

/** The documents holding generated tables or values, by path from the repository root. */
export const generatedDocs = (): string[] => [
  ...new Set([...Object.values(allTables()), ...Object.values(GENERATED_VALUES)].map((t) => t.file)),
];
