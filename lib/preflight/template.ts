/** A synthesized CloudFormation template as the preflight checks read it (plain JSON, no aws-cdk-lib). */
export type Json = unknown;

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, Json>;
  readonly DependsOn?: string | readonly string[];
  readonly DeletionPolicy?: string;
  readonly UpdatePolicy?: Record<string, Json>;
  readonly Metadata?: Record<string, Json>;
}

export interface CfnTemplate {
  readonly Resources: Readonly<Record<string, CfnResource>>;
  readonly Outputs?: Readonly<Record<string, { readonly Value?: Json }>>;
}

export const resourcesOfType = (t: CfnTemplate, type: string): [string, CfnResource][] =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);

/** The logical ids a value names through `Ref`, `Fn::GetAtt` or `Fn::Sub`, anywhere inside it. */
export function referencedIds(value: Json, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) referencedIds(v, out);
  else if (value && typeof value === 'object')
    for (const [key, v] of Object.entries(value)) {
      if (key === 'Ref' && typeof v === 'string') out.add(v);
      else if (key === 'Fn::GetAtt') out.add(Array.isArray(v) ? String(v[0]) : String(v).split('.')[0]!);
      else if (key === 'Fn::Sub') {
        const text = Array.isArray(v) ? v[0] : v;
        if (typeof text === 'string')
          for (const m of text.matchAll(/\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}/g)) out.add(m[1]!);
        if (Array.isArray(v)) referencedIds(v[1], out);
      } else referencedIds(v, out);
    }
  return out;
}

/** What each resource waits for: the resources it references (properties, policies) and its DependsOn. */
export function dependenciesOf(t: CfnTemplate): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [id, r] of Object.entries(t.Resources)) {
    const names = referencedIds([r.Properties ?? {}, r.UpdatePolicy ?? {}]);
    for (const d of typeof r.DependsOn === 'string' ? [r.DependsOn] : (r.DependsOn ?? [])) names.add(d);
    graph.set(id, new Set([...names].filter((n) => n in t.Resources && n !== id)));
  }
  return graph;
}

/** Whether `from` waits (directly or through others) for `to`. */
export function waitsFor(graph: Map<string, Set<string>>, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length) {
    const id = stack.pop()!;
    for (const next of graph.get(id) ?? []) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return false;
}
