/**
 * The size limits of production code under server/, lib/ and components/ (docs/ARCHITECTURE.md):
 * no file over {@link MAX_FILE_LINES} lines, no function over {@link MAX_FUNCTION_LINES}.
 */
import ts from "typescript";

/** Most lines of a production file. */
export const MAX_FILE_LINES = 300;
/** Most lines of one function, method, arrow function or component. */
export const MAX_FUNCTION_LINES = 80;

/** One measured thing: a file (`name` empty) or a function in it. */
export interface Measured {
  file: string;
  /** The function's name (`(anonymous)` when it has none); empty for the file itself. */
  name: string;
  lines: number;
}

/** The file's length and every function in it longer than {@link MAX_FUNCTION_LINES}. */
export function measure(file: string, text: string): Measured[] {
  const out: Measured[] = [{ file, name: "", lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) }];
  if (out[0]!.lines <= MAX_FUNCTION_LINES) return out; // no function in it can be longer than the file
  const sf = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const lines = line(n.getEnd()) - line(n.getStart(sf)) + 1;
      if (lines > MAX_FUNCTION_LINES) out.push({ file, name: functionName(n, sf), lines });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function functionName(n: ts.Node, sf: ts.SourceFile): string {
  const own = (n as { name?: ts.Node }).name;
  if (own) return own.getText(sf);
  if (ts.isConstructorDeclaration(n)) return "constructor";
  if (ts.isVariableDeclaration(n.parent) || ts.isPropertyAssignment(n.parent) || ts.isPropertyDeclaration(n.parent))
    return n.parent.name.getText(sf);
  return "(anonymous)";
}

/** `file` or `file name()`: how a measured thing is named in a failure. */
export const keyOf = (m: Measured) => (m.name ? `${m.file} ${m.name}()` : m.file);

/** Every measured thing over its limit, as "what: N lines (limit L)". */
export function sizeViolations(measured: readonly Measured[]): string[] {
  return measured
    .filter((m) => m.lines > (m.name ? MAX_FUNCTION_LINES : MAX_FILE_LINES))
    .map((m) => `${keyOf(m)}: ${m.lines} lines (limit ${m.name ? MAX_FUNCTION_LINES : MAX_FILE_LINES})`);
}
