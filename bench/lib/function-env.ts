import { ROUTES } from '../../contract/routes.ts';

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
    // As the stack sets it (lib/constructs/api-function.ts); --no-source-maps measures without it.
    ...(argv.includes('--no-source-maps') ? {} : { NODE_OPTIONS: '--enable-source-maps' }),
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
