/**
 * The fields of a route entry's request schemas (`query`, `params`, `headers`: zod objects).
 * The envelope checks requests against them, and the document lists them as parameters.
 */
import type * as z from 'zod/mini';

/** The fields of a request schema, by name; none when the entry declares no such schema. */
export function fieldsOf(schema: unknown): Readonly<Record<string, z.ZodMiniType>> {
  return (schema as { shape?: Record<string, z.ZodMiniType> } | undefined)?.shape ?? {};
}

/**
 * Whether a field may be left out (`z.optional(…)`, or one with a default). The bundles' engine (zod-lite) keeps
 * `optin` on the schema itself, zod under `_zod`.
 */
export const isOptional = (field: z.ZodMiniType): boolean =>
  (field._zod?.optin ?? (field as unknown as { optin?: string }).optin) === 'optional';

/** A field without its `z.optional` wrapper: what it is when given. */
export function given(field: z.ZodMiniType): z.ZodMiniType {
  const def = field._zod.def as { type: string; innerType?: z.ZodMiniType };
  return def.type === 'optional' && def.innerType ? given(def.innerType) : field;
}
