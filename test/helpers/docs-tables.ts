/**
 * The docs' tables that restate the route entries, rendered from them: test/contract/docs.test.ts fails when a
 * document's table differs and prints the table to paste.
 */
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { AUTHORIZER, ROUTES, type FunctionAccess } from '../../contract/routes.ts';

const code = (s: string) => `\`${s}\``;

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
export function leastPrivilegeTable(): string {
  const rows = [
    [AUTHORIZER.name, permissions(AUTHORIZER.access)],
    ...ROUTES.map((r) => [r.operationId, permissions(r.access)]),
  ];
  return ['| Function | Permissions |', '|---|---|', ...rows.map(([f, p]) => `| ${f} | ${p} |`)].join('\n');
}

/** docs/api.md, "Statuses per operation": every status each operation may answer, from the OpenAPI document. */
export function statusesTable(doc: { paths: Record<string, Record<string, { responses: object }>> }): string {
  const rows = ROUTES.map((r) => {
    const statuses = Object.keys(doc.paths[r.path]![r.method.toLowerCase()]!.responses);
    return `| ${code(r.operationId)} | ${code(`${r.method} ${r.path}`)} | ${statuses.join(', ')} |`;
  });
  return ['| Operation | Route | Statuses |', '|---|---|---|', ...rows].join('\n');
}

/** The operation and route of each row of the README's operation table (its third column is prose). */
export const readmeOperationRows = () =>
  ROUTES.map((r) => `| ${code(`${r.method} ${r.path}`)} | ${code(r.operationId)} |`);
