/**
 * Finds writes of a library's private fields in our modules: an assignment to a property (or Object.defineProperty,
 * Reflect.set, Object.assign) whose declaration, on the type of the object written before any cast, is `private` in
 * a package's typings, or `protected` and reached through a cast. TypeScript refuses such writes unless a cast hides
 * the field (`(x as unknown as { console: C }).console = c`), and a library renames its private fields in any
 * release without a word: the write then lands on nothing, silently.
 */
import ts from 'typescript';

export interface PrivateWrite {
  readonly file: string;
  readonly line: number;
  readonly field: string;
  readonly declaredIn: string;
}

const ASSIGNMENTS = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
  ts.SyntaxKind.MinusEqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
]);

/** The expression under parentheses, casts and non-null assertions, and whether a cast was among them. */
function uncast(e: ts.Expression): { base: ts.Expression; cast: boolean } {
  let cast = false;
  for (;;) {
    if (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
    else if (ts.isAsExpression(e) || ts.isTypeAssertionExpression(e)) {
      cast = true;
      e = e.expression;
    } else return { base: e, cast };
  }
}

const nameOf = (e: ts.Expression | undefined): string | undefined =>
  e && (ts.isStringLiteralLike(e) || ts.isNumericLiteral(e)) ? e.text : undefined;

/** Every (object, field) a node writes. */
function writes(node: ts.Node): Array<{ target: ts.Expression; field: string }> {
  if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind)) {
    const l = node.left;
    if (ts.isPropertyAccessExpression(l)) return [{ target: l.expression, field: l.name.text }];
    const field = ts.isElementAccessExpression(l) ? nameOf(l.argumentExpression) : undefined;
    if (field !== undefined) return [{ target: (l as ts.ElementAccessExpression).expression, field }];
  }
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
    const callee = node.expression.getText();
    const [target, second] = node.arguments;
    if ((callee === 'Object.defineProperty' || callee === 'Reflect.set') && target) {
      const field = nameOf(second);
      if (field !== undefined) return [{ target, field }];
    }
    if (callee === 'Object.assign' && target && second && ts.isObjectLiteralExpression(second))
      return second.properties.flatMap((p) =>
        p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [{ target, field: p.name.text }] : [],
      );
  }
  return [];
}

export function privateWrites(program: ts.Program, ours: (file: string) => boolean): PrivateWrite[] {
  const checker = program.getTypeChecker();
  const found: PrivateWrite[] = [];
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !ours(sf.fileName)) continue;
    const visit = (node: ts.Node): void => {
      for (const { target, field } of writes(node)) {
        const { base, cast } = uncast(target);
        const type = checker.getApparentType(checker.getTypeAtLocation(base));
        const types = type.isUnionOrIntersection() ? type.types : [type];
        for (const t of types) {
          const decl = checker
            .getPropertyOfType(t, field)
            ?.declarations?.find((d) => d.getSourceFile().fileName.includes('/node_modules/'));
          if (!decl) continue;
          const flags = ts.getCombinedModifierFlags(decl);
          if (flags & ts.ModifierFlags.Private || (cast && flags & ts.ModifierFlags.Protected)) {
            found.push({
              file: sf.fileName,
              line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1,
              field,
              declaredIn: decl.getSourceFile().fileName.replace(/.*\/node_modules\//, ''),
            });
            break;
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}
