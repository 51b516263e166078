// The Lambda entry: builds the function from its own environment once per container (the composition root).
import { listPetsHandler } from '../handlers/list-pets.ts';
import { runtimeFromEnvironment } from '../shared/runtime.ts';
import { secretsManagerReader } from '../storage/secrets-manager.ts';

// Signed with the credentials and hash the DynamoDB client resolved (the function's role in AWS).
const runtime = runtimeFromEnvironment(process.env, {
  readSecret: (c, { ddb }) =>
    secretsManagerReader({ region: c.AWS_REGION, credentials: ddb.config.credentials, sha256: ddb.config.sha256 }),
});
// The cursor secret is read during the init: an unreadable secret (no grant, no value) fails the cold start, where
// the Lambda errors alarm sees it, rather than the first request that pages.
await runtime.cursorKeys?.();

export const handler = listPetsHandler(runtime);
