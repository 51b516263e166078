import { Arn, ArnFormat, CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { BASE_PATH } from '../../contract/routes.ts';
import { DeployHook, type DeployHookOptions } from './deploy-hook-function.ts';

/**
 * The Secrets Manager secret holding the pre-traffic check's own key, by stage: a key of a standard plan issued by
 * the admin tool like any customer's (docs/deployment.md, "Gradual deploys"). Not created by the stack: the key is
 * issued first and its secret put here, and only then does a deploy run the check (a stack-made secret would hold
 * no issued key, and every deploy's check would fail until someone filled it).
 */
export const checkKeySecretName = (stage: string): string => `animal-store/${stage}/pre-traffic-check-key`;

export interface PreTrafficHookProps extends DeployHookOptions {
  readonly stage: string;
  /** The stage the usage keys are named for (the authorizer's USAGE_KEYS_STAGE, or its STAGE). */
  readonly keysStage: string;
  /** The stack's functions by name (an operationId, or `authorizer`): what the check may invoke and judges. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** The `live` alias's name. */
  readonly liveAlias: string;
}

/**
 * The BeforeAllowTraffic hook of every deployment group (lambdas/hooks/pre-traffic-hook.ts): one function, which
 * reads from the deployment which function and version it judges. Its role may invoke this stack's functions by a
 * qualifier only (a version, or `live`: never the unqualified function, nor another stack's), read its check key
 * and write its own log group; the deployment groups that run it add reading and reporting their own deployments
 * (canary-deployments.ts).
 */
export class PreTrafficHook extends DeployHook {
  constructor(scope: Construct, id: string, props: PreTrafficHookProps) {
    const stack = Stack.of(scope);
    super(scope, id, props, {
      logsId: 'PreTrafficCheckLogs',
      roleDescription: `Animal Store ${props.stage}: the pre-traffic check of each deployment`,
      entry: 'lambdas/hooks/pre-traffic-entry.ts',
      // A read operation's check is 1,000 invocations paced to the check key's share of its budget (at most 12
      // minutes, pre-traffic-hook.ts MAX_PACED_MS: about 3.5 on the Business key).
      description: `Animal Store ${props.stage}: pre-traffic check (CodeDeploy BeforeAllowTraffic)`,
      configVariable: 'PRE_TRAFFIC_CONFIG',
      functions: props.functions,
      config: {
        stage: props.stage,
        keysStage: props.keysStage,
        // The authorizer only reads the API and stage of it (its Allow covers the stage); no API is invoked.
        methodArn: `arn:${stack.partition}:execute-api:${stack.region}:${stack.account}:pre-traffic-check/${props.stage}/GET${BASE_PATH}/pets`,
        liveAlias: props.liveAlias,
        secretId: checkKeySecretName(props.stage),
      },
    });
    const role = this.role;
    // Qualified ARNs only (`<function>:<version or alias>`): the check invokes the deployment's target version, its
    // current version (what a read operation's and the authorizer's answers are compared with: the same function,
    // another qualifier), the live authorizer and, for getPet, the live listPets that finds it a pet to read; never
    // `$LATEST` through the unqualified ARN. The listing needs nothing more: it is one of this stack's functions, invoked by its alias.
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'InvokeThisStacksFunctionVersions',
        actions: ['lambda:InvokeFunction'],
        resources: [...props.functions.values()].map((f) => `${f.functionArn}:*`),
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadTheCheckKey',
        actions: ['secretsmanager:GetSecretValue'],
        // Secrets Manager appends a hyphen and six characters to a secret's name in its ARN.
        resources: [
          Arn.format(
            {
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: `${checkKeySecretName(props.stage)}-??????`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            },
            stack,
          ),
        ],
      }),
    );
    for (const f of props.functions.values()) {
      const id = stack.resolve(stack.getLogicalId(f.node.defaultChild as CfnElement)) as string;
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${id}.Arn>:*]`,
        reason:
          "lambda:InvokeFunction on this function's qualified ARNs: the version a deployment moves live to is known only when it runs (the deployment names it), and the wildcard is the qualifier alone, so the unqualified function ($LATEST) and every other function stay denied.",
      });
    }
  }
}
