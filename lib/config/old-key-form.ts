import type { OldKeyForm } from '../../lambdas/domain/keys.ts';
import type { StageName } from './stage-names.ts';

/**
 * The switch that turns the old key form (`ask_` + 43, no check) off on a stage: `-c animal-store:<stage>:
 * oldKeyForm=refused`, given to the deploy once the authorizer's `OldKeyFormAccepted` metric has stayed at 0 (every
 * old key rotated). A deploy-time setting, not a lookup: the authorizer must learn it without a read. A key record
 * holds only the key's hash, so the admin tool cannot count old keys; the metric counts the ones still used.
 */
export const oldKeyFormContextKey = (stage: StageName): string => `animal-store:${stage}:oldKeyForm`;

export function oldKeyFormOf(stage: StageName, context: (key: string) => unknown): OldKeyForm {
  const v = context(oldKeyFormContextKey(stage));
  if (v === undefined || v === 'accepted') return 'accepted';
  if (v === 'refused') return 'refused';
  throw new Error(`-c ${oldKeyFormContextKey(stage)}=${JSON.stringify(v).slice(0, 40)}: use "refused" or "accepted"`);
}
