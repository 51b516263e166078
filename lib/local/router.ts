/**
 * Resource matching as API Gateway does it: a concrete path against the template's resource paths (a literal
 * segment wins over a `{param}`), then the method: the resource's own, else its `ANY` method.
 */
import type { MethodDef } from './template.ts';

interface Resource {
  readonly path: string;
  readonly parts: readonly string[];
  readonly methods: ReadonlyMap<string, MethodDef>;
}

export interface RouteMatch {
  readonly resourcePath: string;
  readonly params: Record<string, string>;
  readonly method?: MethodDef;
}

export class Router {
  private readonly resources: Resource[];

  constructor(methods: readonly MethodDef[]) {
    const byPath = new Map<string, Map<string, MethodDef>>();
    for (const m of methods) {
      const map = byPath.get(m.resourcePath) ?? new Map<string, MethodDef>();
      map.set(m.httpMethod, m);
      byPath.set(m.resourcePath, map);
    }
    // More literal segments first, so `/pets/mine` would win over `/pets/{petId}`.
    const literals = (parts: readonly string[]) => parts.filter((p) => !p.startsWith('{')).length;
    this.resources = [...byPath]
      .map(([path, m]) => ({ path, parts: path.split('/').filter(Boolean), methods: m }))
      .sort((a, b) => literals(b.parts) - literals(a.parts));
  }

  /** The resource and method for a path below the stage; undefined when no resource matches (or `%` is malformed). */
  match(path: string, httpMethod: string): RouteMatch | undefined {
    const parts = path.split('/').filter(Boolean);
    for (const r of this.resources) {
      if (r.parts.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const ok = r.parts.every((t, i) => {
        const m = /^\{(\w+)\}$/.exec(t);
        if (!m) return t === parts[i];
        params[m[1]!] = decodeURIComponent(parts[i]!);
        return true;
      });
      if (ok) return { resourcePath: r.path, params, method: r.methods.get(httpMethod) ?? r.methods.get('ANY') };
    }
    return undefined;
  }
}
