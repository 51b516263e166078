/**
 * CodeDeploy's Lambda deployment as the templates configure it, for the tests that play a release end to end: an
 * alias update starts a deployment of its group; the BeforeAllowTraffic hook judges first, and a Failed rolls back
 * before any traffic shifts; the group's config shifts the traffic (all at once, or a canary that an enabled alarm
 * may stop); the AfterAllowTraffic hook judges last, and a Failed rolls back. What each hook does is the test's:
 * the model only reads which hooks and which config the template gives each alias. moto runs no CodeDeploy hook,
 * so this follows CodeDeploy's documented lifecycle (docs/deployment.md lists it among the assumptions).
 */
import { DEPLOY_HOOK_METADATA } from '../../lib/stacks/metadata.ts';

type Resources = Record<string, { Type: string; Properties?: any; UpdatePolicy?: any; Metadata?: any }>;

/** What the template says about one alias's deployments. */
export interface AliasDeployment {
  /** The alias's function (its logical id). */
  readonly functionId: string;
  readonly config: string;
  /** Whether the group's alarms may stop a deployment. */
  readonly alarmsEnabled: boolean;
  /** The hooks by the DEPLOY_HOOK_METADATA of the function each names (`preTraffic`, `bake`). */
  readonly beforeAllowTraffic?: string;
  readonly afterAllowTraffic?: string;
}

/** The logical id a hook's name is spelled from (`Fn::Select` of its function's ARN). */
function hookFunctionId(name: unknown): string | undefined {
  const select = (name as { 'Fn::Select'?: [number, { 'Fn::Split': [string, { 'Fn::GetAtt': [string, string] }] }] })?.[
    'Fn::Select'
  ];
  return select?.[1]?.['Fn::Split']?.[1]?.['Fn::GetAtt']?.[0];
}

/** Each alias's deployment, by its function's logical id. */
export function aliasDeployments(template: { Resources: Resources }): Map<string, AliasDeployment> {
  const r = template.Resources;
  const ref = (v: unknown) => (v as { Ref?: string })?.Ref;
  const hookKind = (name: unknown): string | undefined => {
    const id = hookFunctionId(name);
    if (!id) return undefined;
    const kind = r[id]?.Metadata?.[DEPLOY_HOOK_METADATA];
    if (typeof kind !== 'string') throw new Error(`hook ${id} carries no ${DEPLOY_HOOK_METADATA}`);
    return kind;
  };
  const out = new Map<string, AliasDeployment>();
  for (const alias of Object.values(r).filter((x) => x.Type === 'AWS::Lambda::Alias')) {
    const update = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate;
    if (!update) continue;
    const group = r[ref(update.DeploymentGroupName)!]!.Properties;
    const functionId = ref(alias.Properties.FunctionName) ?? alias.Properties.FunctionName;
    const before = hookKind(update.BeforeAllowTrafficHook);
    const after = hookKind(update.AfterAllowTrafficHook);
    out.set(functionId, {
      functionId,
      config: group.DeploymentConfigName,
      alarmsEnabled: group.AlarmConfiguration?.Enabled === true,
      ...(before ? { beforeAllowTraffic: before } : {}),
      ...(after ? { afterAllowTraffic: after } : {}),
    });
  }
  return out;
}

export type HookStatus = 'Succeeded' | 'Failed';

export interface DeploymentPlay {
  /** Runs the hook of that kind for this deployment. */
  readonly hook: (kind: string, lifecycle: 'BeforeAllowTraffic' | 'AfterAllowTraffic') => Promise<HookStatus>;
  /** Whether a gate alarm fires while the canary serves its share. @default () => false */
  readonly alarmFires?: () => boolean;
}

/** How a deployment ended: the new version's final weight, and where it stopped when it did not reach 100 %. */
export interface DeploymentEnd {
  readonly weight: number;
  readonly stoppedAt?: 'BeforeAllowTraffic' | 'canary alarm' | 'AfterAllowTraffic';
}

export async function playDeployment(d: AliasDeployment, play: DeploymentPlay): Promise<DeploymentEnd> {
  if (d.beforeAllowTraffic && (await play.hook(d.beforeAllowTraffic, 'BeforeAllowTraffic')) === 'Failed')
    return { weight: 0, stoppedAt: 'BeforeAllowTraffic' };
  if (d.config !== 'CodeDeployDefault.LambdaAllAtOnce' && d.alarmsEnabled && (play.alarmFires ?? (() => false))())
    return { weight: 0, stoppedAt: 'canary alarm' };
  if (d.afterAllowTraffic && (await play.hook(d.afterAllowTraffic, 'AfterAllowTraffic')) === 'Failed')
    return { weight: 0, stoppedAt: 'AfterAllowTraffic' };
  return { weight: 1 };
}
