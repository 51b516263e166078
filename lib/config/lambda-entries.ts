/**
 * The Lambda entry of each function, generated from the route table when the stack is synthesized (and when the
 * benchmarks bundle): no per-function entry file is kept in the repository. A function is named by its
 * operationId (or `authorizer`); its handler factory is `<name>Handler`, exported by `lambdas/handlers/<name in
 * kebab case>.ts` (lambdas/handlers/index.ts lists them, so the compiler names a missing one). The entry composes
 * the runtime from the function's environment once per container (lambdas/shared/lambda-entry.ts) and builds the
 * handler on it; a function whose entry declares the cursor secret also gets the Secrets Manager reader, and no other
 * function's bundle carries it. Plain data and files, no CDK imports.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUTHORIZER, ROUTES, type FunctionAccess } from '../../contract/routes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the entries are written: ignored by git, outside the synth cache (which prunes its own folder). */
export const LAMBDA_ENTRY_DIR = join(ROOT, 'node_modules', '.cache', 'animal-store-entries');

export interface LambdaFunction {
  /** The operationId, or the authorizer's name. */
  readonly name: string;
  readonly access: FunctionAccess;
}

/** Every function of a stage: one per route, in the route table's order, then the authorizer. */
export const LAMBDA_FUNCTIONS: readonly LambdaFunction[] = [
  ...ROUTES.map((r) => ({ name: r.operationId, access: r.access })),
  { name: AUTHORIZER.name, access: AUTHORIZER.access },
];

/** `getPet` → `lambdas/handlers/get-pet.ts`: the module exporting the function's factory, `getPetHandler`. */
export const handlerModule = (name: string): string =>
  `lambdas/handlers/${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.ts`;

/** The entry's source, importing the sources under `root` from a file in `dir`. */
export function lambdaEntrySource(fn: LambdaFunction, dir: string, root: string = ROOT): string {
  const from = (path: string) => {
    const r = relative(dir, join(root, path)).split('\\').join('/');
    return r.startsWith('.') ? r : `./${r}`;
  };
  const secret = fn.access.cursorSecret === true;
  return [
    `// The Lambda entry of ${fn.name}, generated from the route table by lib/config/lambda-entries.ts: do not edit.`,
    `import { ${fn.name}Handler as factory } from '${from(handlerModule(fn.name))}';`,
    `import { lambdaHandler } from '${from('lambdas/shared/lambda-entry.ts')}';`,
    ...(secret
      ? [
          `import { secretsManagerReader } from '${from('lambdas/storage/secrets-manager.ts')}';`,
          `import { cursorKeySource } from '${from('lambdas/shared/cursor-keys.ts')}';`,
        ]
      : []),
    secret
      ? // Signed with the credentials the DynamoDB client resolves (the function's role in AWS).
        'export const handler = await lambdaHandler(factory, { cursorKeys: cursorKeySource, readSecret: (c, { ddb }) => secretsManagerReader({ region: c.AWS_REGION, credentials: ddb.config.credentials }) });'
      : 'export const handler = await lambdaHandler(factory);',
    '',
  ].join('\n');
}

/**
 * Writes the function's entry into `dir` and returns its path. Written whole under a temporary name, then renamed:
 * several processes may synthesize at once, and each writes the same text.
 */
export function writeLambdaEntry(fn: LambdaFunction, dir: string = LAMBDA_ENTRY_DIR, root: string = ROOT): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${fn.name}.ts`);
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, lambdaEntrySource(fn, dir, root));
  renameSync(tmp, path);
  return path;
}
