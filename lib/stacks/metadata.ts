/**
 * Metadata keys the stack puts on its resources so local tools can map the synthesized template back to the code:
 * the local gateway builds each function from its handler factory and names each table locally. Plain data, no CDK
 * imports.
 */
/** On each AWS::Lambda::Function: the function's name, an operationId or the authorizer's (contract/routes.ts). */
export const FUNCTION_METADATA = 'AnimalStore:Function';
/** On each table: its definition id in contract/tables.ts (`Pets`, `ApiKeys`, `State`). */
export const TABLE_METADATA = 'AnimalStore:Table';
/** On the pre-traffic check's function (a CodeDeploy hook, not a function of the API): local tools leave it out. */
export const DEPLOY_HOOK_METADATA = 'AnimalStore:DeployHook';
