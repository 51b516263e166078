/**
 * The alias every caller invokes (API Gateway's integrations, the authorizer); a deploy moves it between versions.
 * The functions tell a call through it from a direct call of a version (the pre-traffic check's).
 * So the deploy gates count only the alias's traffic.
 */
export const LIVE_ALIAS = 'live';
