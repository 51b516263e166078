/**
 * A template's resources as CloudFormation orders them: an edge from a resource to every resource it names with
 * `Ref`, `Fn::GetAtt`, `Fn::Sub` or `DependsOn`, in its properties and in its update and creation policies (an
 * alias's CodeDeploy UpdatePolicy names its deployment group). CloudFormation refuses a template whose graph has a
 * cycle before it creates anything.
 */
type Json = unknown;

const SUB_NAME = /\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}/g;

function namesIn(value: Json, out: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) namesIn(v, out);
    return;
  }
  if (!value || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (key === 'Ref' && typeof v === 'string') out.add(v);
    else if (key === 'Fn::GetAtt') out.add(Array.isArray(v) ? String(v[0]) : String(v).split('.')[0]!);
    else if (key === 'Fn::Sub') {
      const text = Array.isArray(v) ? v[0] : v;
      if (typeof text === 'string') for (const m of text.matchAll(SUB_NAME)) out.add(m[1]!);
      if (Array.isArray(v)) namesIn(v[1], out);
    } else namesIn(v, out);
  }
}

export type Template = { Resources: Record<string, Record<string, Json>> };

/** Each resource's dependencies on other resources of the template (parameters and pseudo parameters left out). */
export function dependencyGraph(template: Template): Map<string, Set<string>> {
  const ids = new Set(Object.keys(template.Resources));
  const graph = new Map<string, Set<string>>();
  for (const [id, resource] of Object.entries(template.Resources)) {
    const names = new Set<string>();
    for (const part of ['Properties', 'UpdatePolicy', 'CreationPolicy']) namesIn(resource[part], names);
    const dependsOn = resource.DependsOn;
    for (const d of Array.isArray(dependsOn) ? dependsOn : dependsOn ? [dependsOn] : []) names.add(String(d));
    graph.set(id, new Set([...names].filter((n) => ids.has(n))));
  }
  return graph;
}

/** One cycle of the graph as the path of resources that closes it, or undefined when there is none. */
export function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 'open');
    path.push(id);
    for (const next of graph.get(id) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of graph.keys()) {
    if (state.has(id)) continue;
    const found = visit(id);
    if (found) return found;
  }
  return undefined;
}
