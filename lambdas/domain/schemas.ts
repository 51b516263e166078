/**
 * The spec's resources as zod schemas, declared once. Types, request validation and the OpenAPI document all
 * derive from these.
 */
import * as z from 'zod';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
/** Default `status` when a create omits it (spec: "not shown"): a new animal in the store is available. */
export const DEFAULT_PET_STATUS = 'available' satisfies (typeof PET_STATUSES)[number];
export const NAME_MAX_LENGTH = 200;
export const PAGE_SIZE = { min: 1, max: 100, default: 20 } as const;
/** Bodies larger than this (bytes, after base64 decoding) get 413. A NewPet is well under 1 KiB. */
export const MAX_BODY_BYTES = 8 * 1024;

export const PetStatus = z.enum(PET_STATUSES).meta({ id: 'PetStatus', description: 'Availability of the animal.' });

const name = z
  .string()
  .min(1)
  .max(NAME_MAX_LENGTH)
  .refine((s) => s.trim().length > 0, 'name must not be blank')
  .refine((s) => s.isWellFormed(), 'name must be well-formed Unicode (no lone surrogates)')
  .meta({ description: "The animal's name.", example: 'Rex' });

const positiveId = z.int().min(1).meta({ format: 'int64' });

export const NewPet = z
  .object({
    name,
    categoryId: positiveId.meta({ description: 'Identifier of the category the animal belongs to.', example: 1 }),
    status: PetStatus.optional().meta({ description: `Defaults to \`${DEFAULT_PET_STATUS}\` when omitted.` }),
  })
  .meta({ id: 'NewPet', description: 'An animal as sent when creating it. Unknown fields are ignored.' });
export type NewPet = z.infer<typeof NewPet>;

export const Pet = z
  .object({
    id: positiveId.meta({ description: 'Unique identifier assigned by the service on creation.', example: 1001 }),
    name,
    categoryId: positiveId.meta({ description: 'Identifier of the category the animal belongs to.', example: 1 }),
    status: PetStatus,
  })
  .meta({ id: 'Pet', description: 'An animal as returned.' });
export type Pet = z.infer<typeof Pet>;
export type PetStatus = z.infer<typeof PetStatus>;

export const Pets = z.array(Pet).meta({ id: 'Pets', description: 'A page of animals.' });

/** Query strings arrive as strings: accept only canonical decimal integers. */
const decimal = (min: number, max: number) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.int().min(min).max(max));

export const ListPetsQuery = z.object({
  limit: decimal(PAGE_SIZE.min, PAGE_SIZE.max)
    .optional()
    .meta({ description: `Maximum number of animals returned (${PAGE_SIZE.min} to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}).` }),
  status: PetStatus.optional(),
  cursor: z.string().min(1).max(2048).optional().meta({ description: 'Opaque cursor from a previous page\'s `Link: rel="next"`.' }),
});
export type ListPetsQuery = z.infer<typeof ListPetsQuery>;

export const PetIdParam = z.object({
  petId: decimal(1, Number.MAX_SAFE_INTEGER).meta({ description: 'Identifier of the animal to retrieve.' }),
});

export const ErrorObject = z
  .object({
    code: z.string().meta({ description: 'Machine-readable error code.', example: 'not_found' }),
    message: z.string().meta({ description: 'Human-readable description.' }),
    status: z.int().meta({ description: 'The HTTP status code.', example: 404 }),
  })
  .meta({ id: 'Error' });

/** Turns a zod failure into one readable sentence for the Error object's message. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}
