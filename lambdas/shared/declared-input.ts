/**
 * The envelope's checks of what a route entry declares beside its body, after the query, path and body are
 * validated: request headers and the query's names.
 *
 * - Request headers (`request.headers`): each declared one is read whatever the case of its name, refused when
 *   given twice (layers that see one copy each could read different values), required unless optional, validated
 *   with the entry's schema and handed to the handler as `event.validated.headers`.
 * - Query parameters: one the entry does not declare is refused by name, as an unknown body field is: a misspelt
 *   `Status` would otherwise answer every pet, unfiltered, as if the filter held.
 */
import type middy from '@middy/core';
import type * as z from 'zod/mini';
import { fieldsOf, isOptional } from '../../contract/request-fields.ts';
import type { Route } from '../../contract/route-types.ts';
import { describeIssues } from '../../contract/schemas.ts';
import { AppError } from '../domain/errors.ts';
import type { ApiEvent } from './validation.ts';

/** Names quoted in a message: at most a few, each cut short (they are the client's text). */
const quoted = (names: readonly string[]) =>
  names
    .slice(0, 5)
    .map((n) => `"${n.slice(0, 64)}"`)
    .join(', ');

/** Every value a request gives for a header, whatever the case of its name. */
function valuesOf(event: ApiEvent, name: string): string[] {
  const lower = name.toLowerCase();
  const values: string[] = [];
  for (const [k, v] of Object.entries(event.multiValueHeaders ?? {}))
    if (k.toLowerCase() === lower && v) values.push(...v);
  if (values.length) return values;
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (k.toLowerCase() === lower && v !== undefined) values.push(v);
  return values;
}

export function declaredInput(route: Route): middy.MiddlewareObj<ApiEvent> {
  const queryNames = new Set(Object.keys(fieldsOf(route.request.query)));
  const headerFields = Object.entries(fieldsOf(route.request.headers));
  const headerSchema = route.request.headers as z.ZodMiniType | undefined;
  return {
    name: 'declared-input',
    before: (request) => {
      const e = request.event;
      const unknown = Object.keys(e.multiValueQueryStringParameters ?? e.queryStringParameters ?? {}).filter(
        (k) => !queryNames.has(k),
      );
      if (unknown.length)
        throw new AppError(
          'validation_failed',
          `Invalid query: unknown parameter${unknown.length > 1 ? 's' : ''} ${quoted(unknown)}` +
            (queryNames.size ? ` (known: ${[...queryNames].join(', ')}).` : ': this operation takes none.'),
        );
      if (!headerSchema) return;
      const given: Record<string, string> = {};
      for (const [name, field] of headerFields) {
        const values = valuesOf(e, name);
        if (values.length > 1)
          throw new AppError('validation_failed', `Invalid header: ${name} is given more than once.`);
        if (values.length) given[name] = values[0]!;
        else if (!isOptional(field)) throw new AppError('validation_failed', `Invalid header: ${name} is required.`);
      }
      const r = headerSchema.safeParse(given);
      if (!r.success) throw new AppError('validation_failed', `Invalid header: ${describeIssues(r.error)}`);
      e.validated = { ...e.validated, headers: r.data };
    },
  };
}
