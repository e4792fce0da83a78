import { createHmac, timingSafeEqual } from "node:crypto";
import { CosmosError } from "../wire/errors";
import { ridLevel } from "../wire/resource-ids";

/**
 * Master-key authorization as Cosmos DB checks it: the client signs the verb, the resource
 * type, the resource link and the date with HMAC-SHA256 over the account key, and sends
 * `type=master&ver=1.0&sig=...` (URL-encoded) with `x-ms-date`. A request that is unsigned,
 * signed with another key or for another resource, or dated too far from now is a 401.
 */

/** How far a request's date may be from the server's clock, as the service allows. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;

const unauthorized = (message: string) => new CosmosError(401, "Unauthorized", message);

/** The base64 signature of one request (the REST API's "string to sign"). */
function masterKeySignature(key: string, verb: string, resourceType: string, resourceLink: string, date: string): string {
  const text = `${verb.toLowerCase()}\n${resourceType.toLowerCase()}\n${resourceLink}\n${date.toLowerCase()}\n\n`;
  return createHmac("sha256", Buffer.from(key, "base64")).update(text).digest("base64");
}

/**
 * The (resource type, resource link) pairs a request to these path segments may be signed
 * for: a feed (`.../docs`) is signed as its type under its parent, an item as its type with its
 * own link; a partition key delete is signed as an operation on its container.
 */
function signedResources(segments: readonly string[]): [string, string][] {
  const n = segments.length;
  if (n === 0) return [["", ""]];
  if (segments[n - 2] === "operations" && n === 6) return [["colls", segments.slice(0, 4).join("/")]];
  const [type, link] = n % 2 === 1 ? [segments[n - 1], segments.slice(0, -1).join("/")] : [segments[n - 2], segments.join("/")];
  // A link by resource ids (`dbs/<rid>/colls/<rid>`, as the .NET SDK sends for routing) is signed
  // over the last resource id alone, lower-cased; offers are always addressed by theirs.
  const last = link.split("/").pop() ?? "";
  const byRid = n >= 2 && (type === "offers" || ridLevel(last) !== undefined);
  return byRid
    ? [
        [type, link],
        [type, last.toLowerCase()],
      ]
    : [[type, link]];
}

/** The headers that authorize a request with the account key: for callers that do not use the SDK. */
export function authorizationHeaders(key: string, verb: string, path: string, date = new Date()): Record<string, string> {
  const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [type, link] = signedResources(segments)[0];
  const xDate = date.toUTCString();
  return { authorization: encodeURIComponent(`type=master&ver=1.0&sig=${masterKeySignature(key, verb, type, link, xDate)}`), "x-ms-date": xDate };
}

/** Signatures already checked, by what they signed; a client signs the same resource many times within a second. */
export type VerifiedSignatures = Map<string, true>;
const SIGNATURES_KEPT = 1000;

/**
 * Throws a 401 unless the request carries a valid, current master-key signature. A signature
 * found in `verified` for the same verb, resource and date is valid without its HMAC worked out
 * again (its date is still checked against the clock).
 */
export function verifyMasterKey(
  key: string,
  verb: string,
  segments: readonly string[],
  header: (name: string) => string | undefined,
  verified: VerifiedSignatures = new Map(),
  now = Date.now(),
): void {
  const authorization = header("authorization");
  if (!authorization) throw unauthorized("Required Header authorization is missing. Ensure a valid Authorization token is passed.");
  const date = header("x-ms-date") ?? header("date");
  if (!date || Number.isNaN(Date.parse(date))) throw unauthorized("The input date header is invalid format. Please pass in RFC 1123 style date format.");
  if (Math.abs(now - Date.parse(date)) > MAX_CLOCK_SKEW_MS)
    throw unauthorized("The authorization token is not valid at the current time. Please provide a valid token with a current date.");
  const signed = `${verb}\n${segments.join("/")}\n${date}\n${authorization}`;
  if (verified.has(signed)) return;
  let fields: Map<string, string>;
  try {
    // Not URLSearchParams: a base64 signature's '+' is not a space.
    fields = new Map(
      decodeURIComponent(authorization)
        .split("&")
        .map((field) => [field.slice(0, field.indexOf("=")), field.slice(field.indexOf("=") + 1)]),
    );
  } catch {
    throw unauthorized("The authorization header is malformed.");
  }
  const given = Buffer.from(fields.get("sig") ?? "", "base64");
  if (fields.get("type") !== "master") throw unauthorized("Only master-key authorization is supported by the embedded server.");
  const valid = signedResources(segments).some(([type, link]) => {
    const expected = Buffer.from(masterKeySignature(key, verb, type, link, date), "base64");
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!valid)
    throw unauthorized(
      `The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol. Server used the following payload to sign: '${verb.toLowerCase()}\\n${signedResources(segments)[0].join("\\n")}\\n${date.toLowerCase()}\\n\\n'`,
    );
  if (verified.size >= SIGNATURES_KEPT) verified.clear();
  verified.set(signed, true);
}
