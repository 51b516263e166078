/** The createPet operation: everything known about it, in one entry (contract/routes.ts lists them all). */
import * as z from 'zod/mini';
import { NewPet, Pet, meta } from '../schemas.ts';
import { PETS_TABLE, STATE_TABLE } from '../tables.ts';
import { BODY_ERRORS, LIMITER_GRANT, badRequest } from './common.ts';
import type { Route } from '../route-types.ts';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** A client's key for a safe retry: printable ASCII, as any header value can carry unchanged through every layer. */
const IdempotencyKey = meta(
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(IDEMPOTENCY_KEY_MAX_LENGTH),
      z.regex(/^[\x20-\x7E]+$/, 'must be printable ASCII characters (0x20-0x7E)'),
    ),
  {
    description:
      'Makes the create safe to retry: the same key with the same body returns the first result (201, same id); with another body 422; while the first is in flight 409. Keys are scoped to the API key.',
    example: '3f1c9a52-8d1e-4c55-a1e7-3b0a7d6c2f10',
  },
);

/** The document's example body, and the body the benchmarks create with. */
const REX = { name: 'Rex', categoryId: 1, status: 'available' } as const;

export const CREATE_PET = {
  operationId: 'createPet',
  method: 'POST',
  does: 'creates',
  path: '/pets',
  summary: 'Add an animal',
  description:
    'Adds an animal. Send an `Idempotency-Key` to make retries safe: a retry with the same key and body returns the first result.',
  request: { body: NewPet, headers: z.object({ 'Idempotency-Key': z.optional(IdempotencyKey) }) },
  example: REX,
  // No Idempotency-Key: the plain create is the one most calls make.
  sample: { body: REX },
  success: {
    status: 201,
    description: 'The created animal, with the id the service assigned.',
    schema: Pet,
    headers: [
      'Location',
      {
        name: 'Idempotent-Replayed',
        description:
          '`true` when this answer is the stored result of an earlier request with the same Idempotency-Key and body (no new animal was created); absent on the answer that created it.',
        required: false,
        schema: { type: 'string', enum: ['true'] },
      },
    ],
  },
  errors: [
    badRequest(
      ['validation_failed', 'invalid_json'],
      'The body is missing, not valid JSON, or has missing or invalid fields; or the Idempotency-Key is invalid or given twice.',
    ),
    {
      status: 409,
      description: 'A request with the same Idempotency-Key is still in progress.',
      codes: ['idempotency_in_progress'],
      headers: ['Retry-After'],
    },
    ...BODY_ERRORS,
    {
      status: 422,
      description: 'The Idempotency-Key was used before with a different body.',
      codes: ['idempotency_key_reused'],
    },
  ],
  // The pet is a PutItem. The id-block counter and the idempotency record's update are UpdateItems on the state table,
  // like the limiter's. An Idempotency-Key is claimed with a conditional PutItem and released with a DeleteItem.
  // The pet and the record's update are one transaction.
  access: {
    tables: [
      LIMITER_GRANT,
      { table: PETS_TABLE, actions: ['dynamodb:PutItem'], transactional: true },
      { table: STATE_TABLE, actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], transactional: true },
    ],
  },
} as const satisfies Route;
