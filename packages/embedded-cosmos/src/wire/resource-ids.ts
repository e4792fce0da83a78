import { createHash, randomBytes } from "node:crypto";

/**
 * Resource ids (`_rid`) as Cosmos DB makes them: hierarchical, so a child's id begins with its
 * parent's. A database's is 4 bytes, a collection's 8 (its database's, then 4 whose lowest byte
 * has its top bit set, which marks a collection), a document's, stored procedure's, trigger's or
 * partition key range's 16 (its collection's, then a 64-bit little-endian number whose top
 * four bits say which kind of child it is). Written in base64 with `/` as `-`. The .NET SDK
 * parses them to route every request, so they must be well formed, not merely unique.
 */
export type ChildKind = "document" | "sproc" | "trigger" | "udf" | "pkrange";

/** The top four bits of a collection child's number, by kind. */
const CHILD_TYPE: Record<ChildKind, number> = { document: 0x0, pkrange: 0x5, udf: 0x6, trigger: 0x7, sproc: 0x8 };

const encode = (bytes: Buffer) => bytes.toString("base64").replace(/\//g, "-");

/** The bytes of a resource id, or undefined if it is no base64 of 4, 8, 16 or 20 bytes. */
export function ridBytes(rid: string): Buffer | undefined {
  if (rid.length === 0 || rid.length % 4 !== 0 || !/^[A-Za-z0-9+\-/]+=*$/.test(rid)) return undefined;
  const bytes = Buffer.from(rid.replace(/-/g, "/"), "base64");
  return [4, 8, 16, 20].includes(bytes.length) ? bytes : undefined;
}

/** Bytes for a new id: random, or (to give an old id a well-formed one, the same on every load) derived from `from`. */
const freshBytes = (n: number, from?: string) => (from === undefined ? randomBytes(n) : createHash("sha256").update(from).digest().subarray(0, n));

/** A new database id: 4 bytes, never all zero. */
export function databaseRid(from?: string): string {
  const bytes = freshBytes(4, from);
  bytes[0] |= 1;
  return encode(bytes);
}

/** A new collection id under `dbRid`. */
export function collectionRid(dbRid: string, from?: string): string {
  const own = freshBytes(4, from);
  own[0] |= 0x80;
  return encode(Buffer.concat([ridBytes(dbRid)!.subarray(0, 4), own]));
}

/** The id of the child `n` (a document's insertion ordinal; any number unique in its collection) of kind `kind`. */
export function childRid(collectionRid: string, kind: ChildKind, n: bigint): string {
  const own = Buffer.alloc(8);
  own.writeBigUInt64LE((n & 0x0fff_ffff_ffff_ffffn) | (BigInt(CHILD_TYPE[kind]) << 60n));
  return encode(Buffer.concat([ridBytes(collectionRid)!.subarray(0, 8), own]));
}

/** A new child id of a kind with no ordinal of its own (scripts). */
export const newChildRid = (collectionRid: string, kind: ChildKind, from?: string) => childRid(collectionRid, kind, freshBytes(8, from).readBigUInt64LE() | 1n);

/** What a well-formed id names: which level (database, collection, child of a kind). */
export function ridLevel(rid: string): "database" | "collection" | ChildKind | undefined {
  const bytes = ridBytes(rid);
  if (!bytes) return undefined;
  if (bytes.length === 4) return "database";
  if ((bytes[4] & 0x80) === 0) return undefined; // a user's resources, which this server has none of
  if (bytes.length === 8) return "collection";
  const type = bytes[15] >> 4;
  return (Object.keys(CHILD_TYPE) as ChildKind[]).find((kind) => CHILD_TYPE[kind] === type);
}

/** A document's number (its last 8 bytes, little-endian, as the .NET SDK reads it); ORDER BY's ties go in its order. */
export function documentNumber(rid: string): bigint | undefined {
  const bytes = ridBytes(rid);
  return bytes?.length === 16 ? bytes.readBigUInt64LE(8) : undefined;
}

/** Whether `child` is a child of (begins with the bytes of) `parent`. */
export function isChildOf(child: string, parent: string): boolean {
  const [c, p] = [ridBytes(child), ridBytes(parent)];
  return Boolean(c && p && c.length > p.length && c.subarray(0, p.length).equals(p));
}
