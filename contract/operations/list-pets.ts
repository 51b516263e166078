/** The listPets operation: everything known about it, in one entry (contract/routes.ts lists them all). */
import { ListPetsQuery, Pets } from '../schemas.ts';
import { PETS_TABLE } from '../tables.ts';
import { LIMITER_GRANT, badRequest } from './common.ts';
import type { Route } from '../route-types.ts';

export const LIST_PETS = {
  operationId: 'listPets',
  method: 'GET',
  does: 'reads',
  path: '/pets',
  summary: 'List all animals',
  description:
    'Returns a page of animals (a bare array), optionally filtered by status. Follow `Link: rel="next"` for further pages.',
  request: { query: ListPetsQuery },
  sample: { query: { limit: '20' } },
  sampleVariants: { status: { query: { limit: '20', status: 'available' } } },
  success: {
    status: 200,
    description: 'A page of animals, in a stable order; further pages are announced in `Link: rel="next"`.',
    schema: Pets,
    headers: ['LinkNext'],
  },
  errors: [
    badRequest(
      ['validation_failed', 'invalid_cursor'],
      'Invalid query parameters, or a forged, expired or mismatched cursor (`invalid_cursor`).',
    ),
  ],
  access: {
    tables: [
      LIMITER_GRANT,
      { table: PETS_TABLE, actions: ['dynamodb:Scan'] },
      { table: PETS_TABLE, index: PETS_TABLE.indexes[0].indexName, actions: ['dynamodb:Query'] },
    ],
    cursorSecret: true,
  },
} as const satisfies Route;
