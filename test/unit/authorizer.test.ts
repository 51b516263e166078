/** The authorizer's policy must allow the whole stage: API Gateway caches it per token for every route. */
import { describe, expect, it } from 'vitest';
import { stageWildcard } from '../../lambdas/handlers/authorizer.ts';

describe('stageWildcard', () => {
  it('covers every method and path of the stage the call came through', () => {
    expect(stageWildcard('arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/pets/7')).toBe(
      'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*',
    );
  });
});
