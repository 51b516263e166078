/**
 * The small subset of API Gateway's mapping-template language (VTL) the template uses: `$context.<path>` and
 * `$!{context.<path>}`-style references substituted from a context object. Directives (`#set`, `#if`, …) and
 * `$input`/`$util` are not emulated: a template using them fails when the gateway starts, not on a request.
 */
export type MappingContext = { readonly [k: string]: string | number | MappingContext | undefined };

const PATH = '((?:\\.[A-Za-z_][A-Za-z0-9_]*)+)';
/** `$context.a.b`, `$!context.a.b`, `${context.a.b}` or `$!{context.a.b}`: the path is group 1 or group 2. */
const REFERENCE = new RegExp(`\\$!?(?:\\{context${PATH}\\}|context${PATH})`, 'g');

/** Throws if the template uses anything but `$context` references; `known` lists the paths the gateway provides. */
export function checkTemplate(where: string, template: string, known: (path: string) => boolean): void {
  const rest = template.replace(REFERENCE, (_m, braced?: string, bare?: string) => {
    const path = (braced ?? bare)!;
    if (!known(path.slice(1))) throw new Error(`${where}: $context${path} is not emulated by the local gateway`);
    return '';
  });
  if (/[#$]/.test(rest))
    throw new Error(`${where}: mapping template syntax beyond $context references is not emulated: ${template}`);
}

export function lookup(ctx: MappingContext, path: string): string | number | MappingContext | undefined {
  return path
    .split('.')
    .reduce<MappingContext | string | number | undefined>(
      (o, k) => (o && typeof o === 'object' ? o[k] : undefined),
      ctx,
    );
}

/** Renders a template; an undefined reference renders empty, as `$!` does (API Gateway's templates here use values always set). */
export function render(template: string, ctx: MappingContext): string {
  return template.replace(REFERENCE, (_m, braced?: string, bare?: string) => {
    const path = (braced ?? bare)!;
    const v = lookup(ctx, path.slice(1));
    return v === undefined || typeof v === 'object' ? '' : String(v);
  });
}

/** A sample context with every path the gateway fills, for checkTemplate. */
export function knownPaths(sample: MappingContext): (path: string) => boolean {
  return (path) => {
    const v = lookup(sample, path);
    return v !== undefined && typeof v !== 'object';
  };
}
