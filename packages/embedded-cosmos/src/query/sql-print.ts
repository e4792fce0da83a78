/**
 * Prints the SQL engine's syntax tree back as Cosmos DB SQL: what the gateway's query plan
 * needs to hand the SDK its rewritten per-range queries and ORDER BY expressions.
 */
type Node = { type: string; [key: string]: unknown };

const str = (value: string) => JSON.stringify(value);

/** AND and OR: under one of them, a comparison, a NOT or the same operator again needs no parentheses. */
const LOGICAL = new Set(["AND", "OR"]);

/**
 * Whether `node`, printed under the logical operator `parent`, can go without parentheses: the
 * engine's parser takes time exponential in nested parentheses around function calls, so a
 * plan's rewritten query printed with one pair per operator took seconds to parse.
 */
function bareUnder(node: Node, parent: string | undefined): boolean {
  if (parent === undefined || !LOGICAL.has(parent)) return false;
  if (node.type === "scalar_unary_expression") return String(node.operator).toUpperCase() === "NOT";
  const operator = String(node.operator).toUpperCase();
  return !LOGICAL.has(operator) ? operator !== "??" : operator === parent;
}

export function printExpression(node: Node, parent?: string): string {
  switch (node.type) {
    case "identifier":
      return node.name as string;
    case "parameter_name":
      return node.name as string;
    case "string_constant":
      return str(node.value as string);
    case "number_constant":
      return String(node.value);
    case "boolean_constant":
      return node.value ? "true" : "false";
    case "null_constant":
      return "null";
    case "undefined_constant":
      return "undefined";
    case "array_constant":
    case "scalar_array_expression":
      return `[${(node.elements as Node[]).map((element) => printExpression(element)).join(", ")}]`;
    case "object_constant":
    case "scalar_object_expression":
      return `{${(node.properties as { key: Node; value: Node }[]).map((p) => `${str((p.key.name ?? p.key.value) as string)}: ${printExpression(p.value)}`).join(", ")}}`;
    case "scalar_member_expression": {
      const object = printExpression(node.object as Node);
      const property = node.property as Node;
      if (node.computed) return `${object}[${printExpression(property)}]`;
      return `${object}.${property.name as string}`;
    }
    case "scalar_binary_expression": {
      const operator = String(node.operator).toUpperCase();
      const text = `${printExpression(node.left as Node, operator)} ${node.operator as string} ${printExpression(node.right as Node, operator)}`;
      return bareUnder(node, parent) ? text : `(${text})`;
    }
    case "scalar_unary_expression": {
      const text = `${node.operator as string} ${printExpression(node.argument as Node, String(node.operator).toUpperCase())}`;
      return bareUnder(node, parent) ? text : `(${text})`;
    }
    case "scalar_conditional_expression":
      return `(${printExpression(node.test as Node)} ? ${printExpression(node.consequent as Node)} : ${printExpression(node.alternate as Node)})`;
    case "scalar_in_expression":
      return `(${printExpression(node.value as Node)} ${node.not ? "NOT IN" : "IN"} (${(node.list as Node[]).map((element) => printExpression(element)).join(", ")}))`;
    case "scalar_like_expression": {
      const escape = node.escape ? ` ESCAPE ${printExpression(node.escape as Node)}` : "";
      return `(${printExpression(node.value as Node)} LIKE ${printExpression(node.pattern as Node)}${escape})`;
    }
    case "scalar_between_expression":
      return `(${printExpression(node.value as Node)} BETWEEN ${printExpression(node.begin as Node)} AND ${printExpression(node.end as Node)})`;
    case "scalar_function_expression": {
      const name = (node.name as Node).name as string;
      return `${node.udf ? "udf." : ""}${name}(${(node.arguments as Node[]).map((element) => printExpression(element)).join(", ")})`;
    }
    case "scalar_subquery_expression":
      return `(${printQuery(node.expression as Node)})`;
    case "exists_subquery_expression":
      return `EXISTS(${printQuery(node.expression as Node)})`;
    case "array_subquery_expression":
      return `ARRAY(${printQuery(node.expression as Node)})`;
    default:
      throw new Error(`cannot print a ${node.type}`);
  }
}

function printCollection(node: Node): string {
  if (node.type === "collection_expression") return printExpression(node.expression as Node);
  if (node.type === "collection_member_expression") {
    const object = printCollection(node.object as Node);
    const property = node.property as Node;
    return node.computed ? `${object}[${printExpression(property)}]` : `${object}.${property.name as string}`;
  }
  if (node.type === "collection_subquery_expression") return `(${printQuery(node.expression as Node)})`;
  return printExpression(node);
}

function printSource(source: Node): string {
  const expression = printCollection(source.expression as Node);
  const alias = source.alias as Node | null;
  if (!alias) return expression;
  // `a IN c.arr` iterates the array; `c.arr a` names the array itself, one row.
  return source.iteration ? `${alias.name as string} IN ${expression}` : `${expression} ${alias.name as string}`;
}

/** The name the FROM clause gives each item (`FROM c`, `FROM root r`); "r" without FROM. */
export function fromAlias(body: Node): string {
  const from = body.from as Node | null;
  if (!from) return "r";
  const source = from.source as Node;
  return ((source.alias as Node | null)?.name ?? ((source.expression as Node).expression as Node | undefined)?.name) as string;
}

/** `FROM ... [JOIN ...] [WHERE ...]` of a select query. */
export function printFromWhere(body: Node, extraCondition?: string): string {
  const from = body.from as Node | null;
  let text = "";
  if (from) {
    const source = from.source as Node;
    const joins = (from.joins as Node[] | undefined) ?? [];
    text = `FROM ${printSource(source)}${joins.map((join) => ` JOIN ${printSource(join)}`).join("")}`;
  }
  const where = body.where as Node | null;
  // Joined by AND: the condition needs parentheses only where it is an OR; the extra one, whatever it is, gets a pair.
  const conditions = [where ? printExpression(where.condition as Node, "AND") : undefined, extraCondition && `(${extraCondition})`].filter(Boolean);
  if (conditions.length > 0) text += ` WHERE ${conditions.join(" AND ")}`;
  return text;
}

/** The projection of a select query as one expression: `*` is the collection alias, a list becomes an object. */
export function projectionExpression(body: Node, alias: string): string {
  const select = body.select as Node;
  if (select.properties === undefined && select.value === undefined) return alias;
  if (select.value) return printExpression(select.value as Node);
  const properties = ((select.properties as Node).properties as { property: Node; alias: Node | null }[]).map((p) => {
    const name = p.alias?.name ?? ((p.property.property as Node | undefined)?.name as string | undefined) ?? "$1";
    return `${str(name as string)}: ${printExpression(p.property)}`;
  });
  return `{${properties.join(", ")}}`;
}

function printQuery(sql: Node): string {
  const body = (sql.type === "sql" ? sql.body : sql) as Node;
  const select = body.select as Node;
  const top = body.top as Node | null;
  const projection =
    select.value !== undefined
      ? `VALUE ${printExpression(select.value as Node)}`
      : select.properties
        ? ((select.properties as Node).properties as { property: Node; alias: Node | null }[])
            .map((p) => `${printExpression(p.property)}${p.alias ? ` AS ${p.alias.name as string}` : ""}`)
            .join(", ")
        : "*";
  const orderBy = body.orderBy as Node | null;
  const order = orderBy
    ? ` ORDER BY ${(orderBy.expressions as Node[]).map((e) => `${printExpression(e.expression as Node)} ${(e.order as string) ?? "ASC"}`).join(", ")}`
    : "";
  return `SELECT ${top ? `TOP ${printExpression(top.value as Node)} ` : ""}${projection} ${printFromWhere(body)}${order}`.trim();
}
