/** The getPet operation: everything known about it, in one entry (contract/routes.ts lists them all). */
import { Pet, PetIdParam } from '../schemas.ts';
import { PETS_TABLE } from '../tables.ts';
import { LIMITER_GRANT, badRequest } from './common.ts';
import { BASE_PATH, EXISTING_ITEM, type Route } from '../route-types.ts';

const GET_PET_SUNSET = '2030-12-05T00:00:00Z';

export const GET_PET = {
  operationId: 'getPet',
  method: 'GET',
  does: 'reads',
  path: '/pets/{petId}',
  summary: 'Get one animal (deprecated: use GET /pets with the status filter)',
  description: 'Returns one animal.',
  request: { params: PetIdParam },
  sample: { params: { petId: EXISTING_ITEM } },
  success: { status: 200, description: 'The animal.', schema: Pet },
  errors: [
    badRequest(['validation_failed'], 'The petId is not a 64-bit integer (int64) in decimal.'),
    { status: 404, description: 'No animal has this id.', codes: ['not_found'] },
    {
      status: 410,
      description: `The operation was removed at its sunset (${GET_PET_SUNSET}).`,
      codes: ['endpoint_removed'],
    },
  ],
  access: { tables: [LIMITER_GRANT, { table: PETS_TABLE, actions: ['dynamodb:GetItem'] }] },
  deprecation: {
    deprecatedAt: '2026-01-01T00:00:00Z',
    sunsetAt: GET_PET_SUNSET,
    successor: '/pets?status=available',
    instead: `\`GET ${BASE_PATH}/pets\` with the \`status\` filter`,
  },
} as const satisfies Route;
