/**
 * The alias every caller (API Gateway's integrations, the authorizer) invokes; deploys move it between versions.
 * The stack names it (lib/constructs/api-function.ts) and the functions tell an invocation through it from a direct
 * invocation of a version (the pre-traffic check's) by it, so the deploy gates count only the alias's traffic.
 */
export const LIVE_ALIAS = 'live';
