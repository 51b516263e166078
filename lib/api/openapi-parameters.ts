/**
 * The document's parameters, listed from the route entry's request schemas (`params`, `query`, `headers`): the
 * names, whether each is required, its JSON Schema (patterns and bounds included) and its description and example
 * (the field's meta) come from the declaration the envelope validates with, so they cannot say less than it checks.
 */
import * as z from 'zod/mini';
import { fieldsOf, given, isOptional } from '../../contract/request-fields.ts';
import type { Route } from '../../contract/routes.ts';
import { idOf, ref, type Json } from './openapi-components.ts';

const PLACES = [
  ['path', 'params'],
  ['query', 'query'],
  ['header', 'headers'],
] as const;

/** A parameter's schema: a `$ref` for a named one, else its JSON Schema as input, without what the parameter says. */
function schemaOf(field: z.ZodMiniType, doc: Json): Json {
  const id = idOf(given(field));
  if (id) return ref('schemas', id);
  // The default a field's meta states is what the handler gets when it is left out (zod's input schema drops it).
  const fallback = doc.default !== undefined ? { default: doc.default } : {};
  const {
    $schema: _s,
    description: _d,
    example: _e,
    ...schema
  } = z.toJSONSchema(field, { target: 'draft-2020-12', io: 'input' }) as Json;
  return { ...schema, ...fallback };
}

/** The named schemas the parameters use (collected into the components). */
export const parameterSchemas = (route: Route): unknown[] =>
  PLACES.flatMap(([, key]) => Object.values(fieldsOf(route.request[key])))
    .map(given)
    .filter((s) => idOf(s) !== undefined);

export function parameters(route: Route): Json[] {
  return PLACES.flatMap(([where, key]) =>
    Object.entries(fieldsOf(route.request[key])).map(([name, field]) => {
      const doc = (z.globalRegistry.get(field) ?? z.globalRegistry.get(given(field)) ?? {}) as Json;
      return {
        name,
        in: where,
        required: where === 'path' || !isOptional(field),
        ...(doc.description ? { description: doc.description } : {}),
        schema: schemaOf(field, doc),
        ...(doc.example !== undefined ? { example: doc.example } : {}),
      };
    }),
  );
}
