/**
 * Metadata keys the stack puts on its resources so local tools can map the synthesized template back to the code:
 * the local gateway runs each function's handler module and names each table locally. Plain data, no CDK imports.
 */
/** On each AWS::Lambda::Function: its handler module, relative to the repository root. */
export const ENTRY_METADATA = 'AnimalStore:Entry';
/** On each table: its definition id in contract/tables.ts (`Pets`, `ApiKeys`, `State`). */
export const TABLE_METADATA = 'AnimalStore:Table';
