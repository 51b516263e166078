/**
 * What the operations tests share (prod-ops.test.ts, prod-ops-cost.test.ts): the synthesized apps of both stages
 * under the contexts they test, and lookups in a template's resources. Bundling is skipped; cli.test.ts synthesizes
 * with real bundling and cdk-nag.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { TABLES } from '../../contract/tables.ts';
import { existingTableContextKey, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { sharedTemplateJson } from './shared-synth.ts';
import type { Resource } from './stack-fixture.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, SYNTH_CONTEXT } from './synth-context.ts';

export type { Resource } from './stack-fixture.ts';
export type App = ReturnType<typeof createApp>;
/** The documented switch (docs/deployment.md, "Break glass"). */
export const BREAK_GLASS_CONTEXT = 'animal-store:breakGlass';
/** The reason production requires with it. */
export const BREAK_GLASS_REASON = 'the live version answers 429 to everyone; this deploy ships the fix';
/** The table a point-in-time restore is made of (the first declared: any would do). */
export const RESTORED_TABLE = TABLES[0];
/** The name of the restored table the stack is pointed at by context, in both stages. */
export const RESTORED = `animal-store-${RESTORED_TABLE.id.toLowerCase()}-restored`;

/** As `cdk synth` with the given `-c` values (cdk.json's flags included). */
export const synth = (context: Record<string, unknown>): App =>
  createApp({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING, ...context } });

/**
 * Both stages as deployed (`-c` with production's account and alarm e-mail): each stage's resources, from the synth
 * the infrastructure tests share, and the app itself, built on first use (for its annotations and assembly).
 */
export function deployed(): { readonly app: App; templates: Record<StageName, Record<string, Resource>> } {
  let app: App | undefined;
  const templates = {} as Record<StageName, Record<string, Resource>>;
  for (const name of STAGE_NAMES) templates[name] = sharedTemplateJson(name).Resources as Record<string, Resource>;
  return {
    get app() {
      return (app ??= createApp({ context: { ...SYNTH_CONTEXT } }));
    },
    templates,
  };
}

/** Both stages with RESTORED_TABLE pointed at a restored table by context. */
export const restoredApp = (): App =>
  createApp({
    context: {
      ...SYNTH_CONTEXT,
      ...Object.fromEntries(STAGE_NAMES.map((stage) => [existingTableContextKey(stage, RESTORED_TABLE.id), RESTORED])),
    },
  });

export const ofType = (t: Record<string, Resource>, type: string): [string, Resource][] =>
  Object.entries(t).filter(([, r]) => r.Type === type);
export const errorsOf = (app: App, stage: StageName): string[] =>
  Annotations.fromStack(app.stacks[stage])
    .findError('*', Match.anyValue())
    .map((m) => String(m.entry.data));
export const warningsOf = (app: App, stage: StageName): string[] =>
  Annotations.fromStack(app.stacks[stage])
    .findWarning('*', Match.anyValue())
    .map((m) => String(m.entry.data));
export const functionNamed = (t: Record<string, Resource>, name: string): [string, Resource] =>
  ofType(t, 'AWS::Lambda::Function').find(([, f]) => f.Properties.Description?.endsWith(`: ${name}`))!;

export interface OpsApps {
  readonly apps: { readonly deployed: App; readonly bare: App; readonly breakGlass: App };
  readonly templates: Record<StageName, Record<string, Resource>>;
}

/** The apps the operations tests read: as deployed, with nothing on the command line, and with break glass. */
export function opsApps(): OpsApps {
  const d = deployed();
  return {
    apps: {
      get deployed() {
        return d.app;
      },
      // Nothing on the command line: what production must refuse.
      bare: synth({}),
      // Break glass, and production notified through an existing topic instead of e-mail.
      breakGlass: synth({
        [BREAK_GLASS_CONTEXT]: BREAK_GLASS_REASON,
        'animal-store:production:account': '123456789012',
        'animal-store:production:alarmTopicArn': 'arn:aws:sns:eu-west-1:123456789012:team-alarms',
      }),
    },
    templates: d.templates,
  };
}
