import type { Json } from "../wire/json";

type Node = { type: string; [key: string]: unknown };

/** A condition every result must meet that an index can answer: the sargable conjuncts of WHERE. */
export type Predicate =
  | { kind: "equal"; path: string[]; value: Json }
  | { kind: "in"; path: string[]; values: Json[] }
  | { kind: "range"; path: string[]; operator: "<" | "<=" | ">" | ">="; value: Json }
  | { kind: "contains"; path: string[]; value: Json }
  | { kind: "defined"; path: string[] }
  /** FullTextContains (one keyword), FullTextContainsAll (`all`) or FullTextContainsAny: served by a full-text index. */
  | { kind: "fullText"; path: string[]; keywords: Json[]; all: boolean }
  /** An OR of conjunctions, each with at least one indexable condition: the union of their selections. */
  | { kind: "any"; alternatives: Predicate[][] };

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** `alias.a.b` or `alias["a"]` as a property path, if the expression is exactly that. */
export function memberPath(node: unknown, alias: string): string[] | undefined {
  if (!isNode(node) || node.type !== "scalar_member_expression") return undefined;
  const property = node.property as Node;
  const name = property.type === "identifier" ? (property.name as string) : property.type === "string_constant" ? (property.value as string) : undefined;
  if (name === undefined) return undefined;
  const object = node.object as Node;
  if (object.type === "identifier") return object.name === alias ? [name] : undefined;
  const parent = memberPath(object, alias);
  return parent ? [...parent, name] : undefined;
}

/** A constant or a parameter's value; primitives only (equality of objects and arrays is left to the engine). */
function constant(node: unknown, parameters: Map<string, Json>): { value: Json } | undefined {
  if (!isNode(node)) return undefined;
  let value: unknown;
  if (node.type === "parameter_name") {
    if (!parameters.has(node.name as string)) return undefined;
    value = parameters.get(node.name as string);
  } else if (["string_constant", "number_constant", "boolean_constant"].includes(node.type)) {
    value = node.value;
  } else if (node.type === "null_constant") {
    value = null;
  } else {
    return undefined;
  }
  return value === null || ["string", "number", "boolean"].includes(typeof value) ? { value: value as Json } : undefined;
}

/** A list of primitives, as a parameter's value or an array constant (`['a', 'b']`). */
function constantList(node: unknown, parameters: Map<string, Json>): Json[] | undefined {
  if (!isNode(node)) return undefined;
  let values: unknown;
  if (node.type === "parameter_name") values = parameters.get(node.name as string);
  else if (node.type === "array_constant") values = (node.elements as unknown[]).map((element) => constant(element, parameters)?.value);
  if (!Array.isArray(values)) return undefined;
  return values.every((value) => value === null || ["string", "number", "boolean"].includes(typeof value)) ? (values as Json[]) : undefined;
}

/** The full-text functions a full-text index answers, and whether an item must hold all their keywords. */
const FULL_TEXT_FUNCTIONS: Record<string, { all: boolean } | undefined> = {
  FULLTEXTCONTAINS: { all: true },
  FULLTEXTCONTAINSALL: { all: true },
  FULLTEXTCONTAINSANY: { all: false },
};

const MIRRORED = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" } as const;

/** Adds the indexable predicates of `condition` to `out`; true when they say all it says (an index alone answers it). */
function collect(condition: unknown, alias: string, parameters: Map<string, Json>, out: Predicate[]): boolean {
  if (!isNode(condition)) return false;
  if (condition.type === "scalar_binary_expression") {
    const operator = condition.operator as string;
    if (operator === "AND") {
      const left = collect(condition.left, alias, parameters, out);
      return collect(condition.right, alias, parameters, out) && left;
    }
    if (operator === "OR") {
      let complete = true;
      const alternatives = [condition.left, condition.right].flatMap((side) => {
        const found: Predicate[] = [];
        complete = collect(side, alias, parameters, found) && complete;
        // A nested OR contributes its own alternatives.
        return found.length === 1 && found[0].kind === "any" ? found[0].alternatives : [found];
      });
      if (!alternatives.every((conjunction) => conjunction.length > 0)) return false;
      out.push({ kind: "any", alternatives });
      return complete;
    }
    for (const [member, other, mirrored] of [
      [condition.left, condition.right, false],
      [condition.right, condition.left, true],
    ] as const) {
      const path = memberPath(member, alias);
      const value = path && constant(other, parameters);
      if (!path || !value) continue;
      if (operator === "=") out.push({ kind: "equal", path, value: value.value });
      else if (operator in MIRRORED && value.value !== null && typeof value.value !== "boolean") {
        const op = operator as keyof typeof MIRRORED;
        out.push({ kind: "range", path, operator: mirrored ? MIRRORED[op] : op, value: value.value });
      } else return false;
      return true;
    }
    return false;
  }
  if (condition.type === "scalar_in_expression" && !condition.not) {
    const path = memberPath(condition.value, alias);
    const values = (condition.list as unknown[]).map((item) => constant(item, parameters));
    if (!path || !values.every(Boolean)) return false;
    out.push({ kind: "in", path, values: values.map((v) => v!.value) });
    return true;
  }
  if (condition.type === "scalar_function_expression") {
    const name = String((condition.name as Node).name).toUpperCase();
    const args = condition.arguments as unknown[];
    const path = args.length > 0 ? memberPath(args[0], alias) : undefined;
    if (name === "IS_DEFINED" && args.length === 1 && path) {
      out.push({ kind: "defined", path });
      return true;
    }
    const fullText = FULL_TEXT_FUNCTIONS[name];
    const keywords = fullText && path ? args.slice(1).map((arg) => constant(arg, parameters)) : [];
    if (fullText && path && keywords.length > 0 && keywords.every((k) => typeof k?.value === "string")) {
      out.push({ kind: "fullText", path, keywords: keywords.map((k) => k!.value), all: fullText.all });
      return true;
    }
    // ARRAY_CONTAINS(list, path) is path IN list: the like script finds a post and its likes by id so.
    const list = args.length === 2 ? constantList(args[0], parameters) : undefined;
    const member = args.length === 2 ? memberPath(args[1], alias) : undefined;
    if (name === "ARRAY_CONTAINS" && list && member) {
      out.push({ kind: "in", path: member, values: list });
      return true;
    }
    const value = args.length === 2 && constant(args[1], parameters);
    if (name === "ARRAY_CONTAINS" && path && value) {
      out.push({ kind: "contains", path, value: value.value });
      return true;
    }
  }
  return false;
}

/**
 * The predicates every result must satisfy that an index can select: the conjuncts at the top
 * of WHERE comparing `alias.path` with a constant (=, <, <=, >, >=, IN), ARRAY_CONTAINS with a
 * constant (or of a constant list and a path, which is IN), IS_DEFINED, and ORs whose every side has such a condition. Anything else (NOT,
 * functions of paths) is left to the engine, which evaluates the whole WHERE over the
 * candidates these select. `complete` when they are the whole WHERE (or there is none): then an
 * index alone knows the results, and a `COUNT` or a `TOP n` need not load every candidate.
 */
export function indexablePredicates(ast: unknown, parameters: { name: string; value: Json }[]): { predicates: Predicate[]; complete: boolean } {
  const none = { predicates: [], complete: false };
  const body = isNode(ast) ? (ast.body as Node | undefined) : undefined;
  if (!body || body.type !== "select_query") return none;
  const source = (body.from as Node | null)?.source as Node | undefined;
  const expression = source?.expression as Node | undefined;
  if (!expression || expression.type !== "collection_expression" || (expression.expression as Node).type !== "identifier") return none;
  const alias = ((source!.alias as Node | null)?.name ?? (expression.expression as Node).name) as string;
  const where = (body.where as Node | null)?.condition;
  if (where === undefined) return { predicates: [], complete: true };
  const predicates: Predicate[] = [];
  const complete = collect(where, alias, new Map(parameters.map((p) => [p.name, p.value])), predicates);
  return { predicates, complete };
}
