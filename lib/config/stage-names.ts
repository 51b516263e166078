/**
 * The deployable stages' names, as plain data (no CDK import) so the admin CLI can check `--stage` without loading
 * aws-cdk-lib. STAGES (stages.ts) is typed Record<StageName, StageConfig>: it has exactly one entry per name here.
 */
export const STAGE_NAMES = ['staging', 'production'] as const;
export type StageName = (typeof STAGE_NAMES)[number];
