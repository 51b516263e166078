/**
 * Every policy document a template attaches to one of its roles, in each form CloudFormation offers: the role's
 * inline `Policies`, its `ManagedPolicyArns` naming an AWS::IAM::ManagedPolicy of the template, an
 * AWS::IAM::ManagedPolicy or AWS::IAM::Policy listing the role in `Roles`, an AWS::IAM::RolePolicy naming it in
 * `RoleName` (by `Ref`, or by a string equal to the role's `RoleName`). What could attach a policy we cannot read
 * (a managed policy outside the template, a permissions boundary, a role named by a string no role of the template
 * has, any other intrinsic) is refused with an error naming it: a Deny we did not read must never become an allow.
 */
import type { CfnResource, CfnTemplate } from './template.ts';

export interface AttachedDocument {
  /** Where it comes from, for messages: `<logical id>` or `<role>.Policies[0]`. */
  readonly source: string;
  readonly document: unknown;
}

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The role a `Roles` entry or `RoleName` value names, or undefined for a role outside the template. */
function namedRole(t: CfnTemplate, value: unknown, where: string): string | undefined {
  if (value && typeof value === 'object' && typeof (value as { Ref?: unknown }).Ref === 'string') {
    const id = (value as { Ref: string }).Ref;
    if (t.Resources[id]?.Type === 'AWS::IAM::Role') return id;
    throw new Error(`${where}: names the role by Ref ${id}, which is not a role of this template; not emulated`);
  }
  if (typeof value === 'string') {
    const match = Object.entries(t.Resources).find(
      ([, r]) => r.Type === 'AWS::IAM::Role' && r.Properties?.RoleName === value,
    );
    if (match) return match[0];
    throw new Error(
      `${where}: names the role "${value}" by a string no role of this template has as RoleName; the emulation cannot tell whether it is a function's role, so it refuses rather than ignoring the policy`,
    );
  }
  throw new Error(`${where}: names a role by ${JSON.stringify(value)}; not emulated`);
}

/** Every policy document attached to `roleId`; throws on any attachment it cannot read (see the module comment). */
export function attachedDocuments(t: CfnTemplate, roleId: string): AttachedDocument[] {
  const role = t.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleId} is not a role of this template`);
  const where = `role ${roleId}`;
  if (role.Properties?.PermissionsBoundary !== undefined)
    throw new Error(`${where}: PermissionsBoundary is not emulated; refusing rather than allowing what it might deny`);
  const out: AttachedDocument[] = list(role.Properties?.Policies).map((p, i) => ({
    source: `${roleId}.Policies[${i}]`,
    document: (p as { PolicyDocument: unknown }).PolicyDocument,
  }));
  const managed = new Set<string>();
  for (const arn of list(role.Properties?.ManagedPolicyArns)) {
    const ref = (arn as { Ref?: unknown } | undefined)?.Ref;
    if (typeof ref !== 'string' || t.Resources[ref]?.Type !== 'AWS::IAM::ManagedPolicy')
      throw new Error(
        `${where}: ManagedPolicyArns ${JSON.stringify(arn)} is not emulated (a policy outside the template); refusing rather than allowing what it might deny`,
      );
    managed.add(ref);
  }
  const attached = (r: CfnResource, id: string, names: unknown[]) =>
    names.some((n) => namedRole(t, n, `${r.Type} ${id}`) === roleId);
  for (const [id, r] of Object.entries(t.Resources)) {
    const p = r.Properties ?? {};
    if (r.Type === 'AWS::IAM::Policy' && attached(r, id, list(p.Roles)))
      out.push({ source: id, document: p.PolicyDocument });
    else if (r.Type === 'AWS::IAM::RolePolicy' && attached(r, id, [p.RoleName]))
      out.push({ source: id, document: p.PolicyDocument });
    else if (r.Type === 'AWS::IAM::ManagedPolicy' && (managed.has(id) || attached(r, id, list(p.Roles))))
      out.push({ source: id, document: p.PolicyDocument });
  }
  return out;
}
