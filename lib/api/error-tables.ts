/**
 * The docs' error-code tables, rendered from contract/errors.ts (codes, statuses and what each means to a
 * client), with the operations whose route entries declare a code, so no error table is
 * written by hand. lib/api/docs-tables.ts lists them among the generated tables.
 */
import { ERROR_CODES, type ErrorCode } from '../../contract/errors.ts';
import { ROUTES, type Route } from '../../contract/routes.ts';
import { envelopeErrors } from './openapi-envelope.ts';

const code = (s: string) => `\`${s}\``;
const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
const codes = Object.keys(ERROR_CODES) as ErrorCode[];

/** The operations that may answer `c`, when not every one may (as the document lists their responses). */
function declaredBy(c: ErrorCode, routes: readonly Route[]): string {
  const ops = routes.filter((r) => envelopeErrors(r).some((e) => e.codes.includes(c)));
  return ops.length && ops.length < routes.length ? ` (${ops.map((r) => code(r.operationId)).join(', ')})` : '';
}

/** docs/api.md, "Error codes": every code with its status, when it is answered and whether a client retries. */
export function errorCodesTable(routes: readonly Route[] = ROUTES): string {
  return [
    row(['Code', 'HTTP', 'When', 'Client retries']),
    '|---|---|---|---|',
    ...codes.map((c) =>
      row([
        code(c),
        String(ERROR_CODES[c].status),
        `${ERROR_CODES[c].when}${declaredBy(c, routes)}`,
        ERROR_CODES[c].retry,
      ]),
    ),
  ].join('\n');
}

/** README.md, "The API in brief": the codes and their statuses, two to a row. */
export function errorCodesSummary(): string {
  const half = Math.ceil(codes.length / 2);
  const cells = (c: ErrorCode | undefined) => (c ? [code(c), String(ERROR_CODES[c].status)] : ['', '']);
  return [
    row(['Code', 'HTTP', 'Code', 'HTTP']),
    '|---|---|---|---|',
    ...codes.slice(0, half).map((c, i) => row([...cells(c), ...cells(codes[half + i])])),
  ].join('\n');
}
