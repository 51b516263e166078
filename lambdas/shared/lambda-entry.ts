/**
 * What every deployed function's Lambda entry does (the entries are generated from the route table when the stack
 * is synthesized: lib/config/lambda-entries.ts): compose the runtime from the function's own environment, once per
 * container (the composition root), and build the handler on it.
 */
import { runtimeFromEnvironment, type HandlerFactory, type RuntimeOptions } from './runtime.ts';

export async function lambdaHandler<H>(
  factory: HandlerFactory<H>,
  options: Pick<RuntimeOptions, 'readSecret' | 'cursorKeys'> = {},
): Promise<H> {
  const runtime = runtimeFromEnvironment(process.env, options);
  // A function configured with the cursor secret reads it during the init: an unreadable secret (no grant, no
  // value) fails the cold start, where the Lambda errors alarm sees it, rather than the first request that pages.
  await runtime.cursorKeys?.();
  return factory(runtime);
}
