import { isObject, type Json, type JsonObject } from "./resources";

type Node = { type: string; [key: string]: unknown };

export interface EqualityFilter {
  path: string[];
  value: string | number | boolean | null;
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** `alias.a.b` or `alias["a"]` as a property path, if the expression is exactly that. */
function memberPath(node: unknown, alias: string): string[] | undefined {
  if (!isNode(node) || node.type !== "scalar_member_expression") return undefined;
  const property = node.property as Node;
  const name = property.type === "identifier" ? (property.name as string) : property.type === "string_constant" ? (property.value as string) : undefined;
  if (name === undefined) return undefined;
  const object = node.object as Node;
  if (object.type === "identifier") return object.name === alias ? [name] : undefined;
  const parent = memberPath(object, alias);
  return parent ? [...parent, name] : undefined;
}

function constant(node: unknown, parameters: Map<string, Json>): { value: EqualityFilter["value"] } | undefined {
  if (!isNode(node)) return undefined;
  let value: unknown;
  if (node.type === "parameter_name") {
    if (!parameters.has(node.name as string)) return undefined;
    value = parameters.get(node.name as string);
  } else if (node.type === "string_constant" || node.type === "number_constant" || node.type === "boolean_constant") {
    value = node.value;
  } else if (node.type === "null_constant") {
    value = null;
  } else {
    return undefined;
  }
  // Only primitives: equality of objects and arrays is left to the query engine.
  return value === null || ["string", "number", "boolean"].includes(typeof value) ? { value: value as EqualityFilter["value"] } : undefined;
}

function collect(condition: unknown, alias: string, parameters: Map<string, Json>, out: EqualityFilter[]): void {
  if (!isNode(condition) || condition.type !== "scalar_binary_expression") return;
  if (condition.operator === "AND") {
    collect(condition.left, alias, parameters, out);
    collect(condition.right, alias, parameters, out);
  } else if (condition.operator === "=") {
    for (const [member, other] of [[condition.left, condition.right], [condition.right, condition.left]]) {
      const path = memberPath(member, alias);
      const value = path && constant(other, parameters);
      if (path && value) {
        out.push({ path, value: value.value });
        return;
      }
    }
  }
}

/**
 * The equality predicates every result must satisfy: the `alias.path = value` conjuncts at the
 * top of the WHERE clause. Selecting candidates by them first is what an index does, and it
 * keeps the SQL engine (which builds its FROM set in quadratic time) on small inputs.
 */
export function equalityFilters(ast: unknown, parameters: { name: string; value: Json }[]): EqualityFilter[] {
  const body = isNode(ast) ? (ast.body as Node | undefined) : undefined;
  if (!body || body.type !== "select_query") return [];
  const source = (body.from as Node | null)?.source as Node | undefined;
  const expression = source?.expression as Node | undefined;
  if (!expression || expression.type !== "collection_expression" || (expression.expression as Node).type !== "identifier") return [];
  const alias = ((source!.alias as Node | null)?.name ?? (expression.expression as Node).name) as string;
  const filters: EqualityFilter[] = [];
  collect((body.where as Node | null)?.condition, alias, new Map(parameters.map((p) => [p.name, p.value])), filters);
  return filters;
}

export function matches(doc: JsonObject, filters: EqualityFilter[]): boolean {
  return filters.every(({ path, value }) => {
    let node: Json | undefined = doc;
    for (const part of path) node = isObject(node) ? node[part] : undefined;
    return node === value;
  });
}
