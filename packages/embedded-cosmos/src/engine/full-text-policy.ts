import { badRequest } from "../wire/errors";
import { isObject, type JsonObject } from "../wire/json";

/**
 * The languages a full-text policy may name here. Azure's generally available language is
 * English (`en-US`); its others are in preview behind an account capability, and this server's
 * tokenizer is English only, so it refuses them rather than index them wrongly.
 */
const LANGUAGES = new Set(["en-US"]);

function checkLanguage(language: unknown, where: string): void {
  if (language !== undefined && !LANGUAGES.has(language as string))
    throw badRequest(`The full-text policy's ${where} '${String(language)}' is not supported: use one of ${[...LANGUAGES].join(", ")}.`);
}

/**
 * A container's full-text policy and full-text indexes, checked as Azure checks them: each path
 * is a property path (`/title`), the languages are known, and every full-text index is on a
 * path the policy names (the policy says how a path is tokenized; the index makes it searchable).
 */
export function checkFullText(definition: JsonObject): void {
  const policy = definition.fullTextPolicy;
  const paths = new Set<string>();
  if (policy !== undefined) {
    if (!isObject(policy) || !Array.isArray(policy.fullTextPaths)) throw badRequest("The full-text policy needs 'fullTextPaths', an array.");
    checkLanguage(policy.defaultLanguage, "defaultLanguage");
    for (const entry of policy.fullTextPaths) {
      if (!isObject(entry) || typeof entry.path !== "string" || !entry.path.startsWith("/"))
        throw badRequest("Each of the full-text policy's 'fullTextPaths' needs a 'path' starting with '/'.");
      checkLanguage(entry.language, `language of '${entry.path}'`);
      paths.add(entry.path);
    }
  }
  const indexes = isObject(definition.indexingPolicy) ? definition.indexingPolicy.fullTextIndexes : undefined;
  for (const index of Array.isArray(indexes) ? indexes : []) {
    const path = isObject(index) ? index.path : undefined;
    if (typeof path !== "string" || !paths.has(path))
      throw badRequest(`The full-text index on '${String(path)}' needs that path in the container's full-text policy.`);
  }
}
