import { ROUTES } from '../../contract/routes.ts';
import { FUNCTION_RUNTIME, lambdaHeapFlags } from '../../lib/config/function-runtime.ts';

/** The environment a bench runs a function bundle (and its floor) in, as the stack deploys it. */
export function functionEnv(
  tableEnv: Record<string, string | undefined>,
  endpoint: string,
  argv: readonly string[],
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...tableEnv,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: 'us-east-1',
    STAGE: 'local',
    // As deployed: metrics on (the EMF lines go to the process's stdout), and Lambda's own variable for an on-demand
    // start, which Powertools reads to count a cold start (the floor pays it too).
    METRICS: 'on',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LOG_LEVEL: 'WARN',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789',
    // The function's memory, and the heap limits Lambda's bootstrap derives from it (every side, cold and warm, the
    // floor included): with them a warm process's pauses per call are a fraction of those at V8's defaults (listPets
    // Business c=1: 19-66 µs per call in this round's runs, 17-24 collections per 1,000 calls, against 136-156 µs and
    // 9-12 last round): the pauses a call meets in Lambda. The stack's own NODE_OPTIONS beside them;
    // --no-source-maps measures without source maps, --no-lambda-heap without Lambda's heap limits.
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(FUNCTION_RUNTIME.memoryMb),
    NODE_OPTIONS: [
      ...(argv.includes('--no-source-maps') ? [] : [FUNCTION_RUNTIME.nodeOptions]),
      ...(argv.includes('--no-lambda-heap') ? [] : [lambdaHeapFlags(FUNCTION_RUNTIME.memoryMb)]),
    ].join(' '),
  };
}

/**
 * The metric lines a function writes on every call of its operation (operationId), which its floor must write too
 * (FLOOR_COUNTS, read by bench/floor-common.ts): a deprecated route's call and an operation answered 501 (listOrders,
 * not specified yet), as lambdas/shared/http.ts counts them.
 */
export function floorCounts(operationId: string, expectedStatus: number | 'allow'): string {
  const route = ROUTES.find((r) => r.operationId === operationId);
  return [
    ...(route?.deprecation ? ['DeprecatedOperationCall'] : []),
    ...(expectedStatus === 501 ? ['NotImplemented'] : []),
  ].join(',');
}
