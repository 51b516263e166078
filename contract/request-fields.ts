/**
 * The fields of a route entry's request schemas (`query`, `params`, `headers`: zod objects): what the envelope
 * checks a request against and what the document lists as parameters, read from the one declaration.
 */
import type * as z from 'zod/mini';

/** The fields of a request schema, by name; none when the entry declares no such schema. */
export function fieldsOf(schema: unknown): Readonly<Record<string, z.ZodMiniType>> {
  const shape = (schema as { _zod?: { def?: { shape?: Record<string, z.ZodMiniType> } } } | undefined)?._zod?.def
    ?.shape;
  return shape ?? {};
}

/** Whether a field may be left out (`z.optional(…)`, or one with a default). */
export const isOptional = (field: z.ZodMiniType): boolean => field._zod.optin === 'optional';

/** A field without its `z.optional` wrapper: what it is when given. */
export function given(field: z.ZodMiniType): z.ZodMiniType {
  const def = field._zod.def as { type: string; innerType?: z.ZodMiniType };
  return def.type === 'optional' && def.innerType ? given(def.innerType) : field;
}
