/**
 * Break glass: one deploy that skips every release check (the pre-traffic check, the canary gates and the bake) and
 * shifts each function all at once. It exists so an incident in the live version cannot block its own fix: a live
 * version that answers 429 to everyone, or a live authorizer that refuses the check's key, makes every check
 * "cannot judge". Plain data, no CDK imports.
 */

/** `-c animal-store:breakGlass="<reason>"`; `true` alone is accepted where no reason is required. */
export const BREAK_GLASS_CONTEXT = 'animal-store:breakGlass';

/** What the context asks for: nothing, or break glass with the reason given (empty when none). */
export type BreakGlass = { readonly on: false } | { readonly on: true; readonly reason: string };

/** Words that read as "no": never a reason, so `breakGlass=no` cannot break glass with the reason "no". */
const OFF = new Set(['', 'false', 'no', 'off', '0']);
const NO_REASON = new Set(['true']);

export function breakGlassOf(value: unknown): BreakGlass {
  if (value === undefined || value === null || value === false) return { on: false };
  if (value === true) return { on: true, reason: '' };
  const text = String(value).trim();
  if (OFF.has(text.toLowerCase())) return { on: false };
  return { on: true, reason: NO_REASON.has(text.toLowerCase()) ? '' : text };
}

/** The synth error when a stage that requires a reason is given none (undefined when the request is sound). */
export function breakGlassRefusal(glass: BreakGlass, stage: string, needsReason: boolean): string | undefined {
  if (!glass.on || glass.reason || !needsReason) return undefined;
  return (
    `break glass on ${stage} needs a reason, which the stack records: ` +
    `-c ${BREAK_GLASS_CONTEXT}="<what is broken and what this deploy fixes>"`
  );
}
