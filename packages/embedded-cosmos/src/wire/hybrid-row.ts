import { crc32 } from "node:zlib";
import { badRequest } from "./errors";

/**
 * The part of Cosmos DB's HybridRow binary format that the .NET SDK's batch and bulk requests
 * use: rows of a schema (a header, presence bits, fixed fields, length-prefixed variable
 * fields, then sparse fields each with its type code and path token), framed as a RecordIO
 * stream (a segment row, then a record row with length and CRC-32 before each row). All
 * integers are little-endian. The .NET SDK's own reader checks every reply this server writes
 * (test/dotnet).
 */

export type FieldType = "bool" | "int32" | "uint32" | "float64" | "utf8" | "binary";
export interface Field {
  path: string;
  type: FieldType;
  storage: "fixed" | "variable" | "sparse";
  /** Fixed fields are nullable (have a presence bit) unless the schema says otherwise. */
  nullable?: boolean;
}
export interface RowSchema {
  id: number;
  fields: Field[];
}
export type RowValues = Record<string, boolean | number | string | Buffer>;

const VERSION_1 = 0x81;
const HEADER_BYTES = 5;
/** Layout codes of the sparse field types used here; a sparse bool is its code alone (true), or the code before it (false). */
const CODE: Record<FieldType, number> = { bool: 3, int32: 7, uint32: 11, float64: 16, utf8: 20, binary: 21 };
const BOOL_FALSE = 2;
const TYPE_OF_CODE = new Map<number, FieldType>([...Object.entries(CODE).map(([type, code]) => [code, type as FieldType] as const), [BOOL_FALSE, "bool"]]);
const FIXED_BYTES: Partial<Record<FieldType, number>> = { int32: 4, uint32: 4, float64: 8 };

interface Layout {
  schema: RowSchema;
  bitmaskBytes: number;
  fixed: { field: Field; bit: number | undefined; offset: number }[];
  variable: { field: Field; bit: number }[];
  /** Path tokens: every field's index in fixed, variable, sparse order, from 1. */
  tokens: Map<string, number>;
  pathOfToken: string[];
  sparse: Map<string, Field>;
}

/** Where each field of a schema lives in a row, as HybridRow's layout compiler places it. */
export function layoutOf(schema: RowSchema): Layout {
  let bits = 0;
  let offset = 0;
  const fixed: Layout["fixed"] = [];
  const variable: Layout["variable"] = [];
  if (schema.fields.some((f) => f.type === "bool" && f.storage !== "sparse")) throw new Error("Only sparse bools are supported.");
  for (const field of schema.fields.filter((f) => f.storage === "fixed")) {
    fixed.push({ field, bit: field.nullable === false ? undefined : bits++, offset });
    offset += FIXED_BYTES[field.type] ?? 0;
  }
  for (const field of schema.fields.filter((f) => f.storage === "variable")) variable.push({ field, bit: bits++ });
  const sparse = schema.fields.filter((f) => f.storage === "sparse");
  const ordered = [...fixed.map((f) => f.field), ...variable.map((v) => v.field), ...sparse];
  const bitmaskBytes = Math.ceil(bits / 8);
  return {
    schema,
    bitmaskBytes,
    fixed: fixed.map((f) => ({ ...f, offset: f.offset + bitmaskBytes })),
    variable,
    tokens: new Map(ordered.map((f, i) => [f.path, i + 1])),
    pathOfToken: ["", ...ordered.map((f) => f.path)],
    sparse: new Map(sparse.map((f) => [f.path, f])),
  };
}

/** The fixed part's size: the presence bits and the fixed fields. */
const fixedSize = (layout: Layout) => layout.bitmaskBytes + layout.fixed.reduce((n, f) => n + (FIXED_BYTES[f.field.type] ?? 0), 0);

/** A reader over one row's bytes that refuses to read past them. */
class Cursor {
  constructor(
    readonly bytes: Buffer,
    public at = 0,
  ) {}
  take(n: number): Buffer {
    if (n < 0 || this.at + n > this.bytes.length) throw badRequest("The HybridRow payload ends inside a field.");
    const slice = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return slice;
  }
  varuint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.take(1)[0];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw badRequest("The HybridRow payload has a malformed length.");
  }
}

function readScalar(cursor: Cursor, type: FieldType): number | string | Buffer {
  switch (type) {
    case "bool":
      throw badRequest("A HybridRow bool is read from its type code.");
    case "int32":
      return cursor.take(4).readInt32LE(0);
    case "uint32":
      return cursor.take(4).readUInt32LE(0);
    case "float64":
      return cursor.take(8).readDoubleLE(0);
    case "utf8":
      return cursor.take(cursor.varuint()).toString("utf8");
    case "binary":
      return Buffer.from(cursor.take(cursor.varuint()));
  }
}

/** The values of one row of `layout`'s schema; absent fields are absent. */
export function readRow(layout: Layout, bytes: Buffer): RowValues {
  const cursor = new Cursor(bytes);
  const header = cursor.take(HEADER_BYTES);
  if (header[0] !== VERSION_1) throw badRequest("The HybridRow payload has an unknown version.");
  if (header.readInt32LE(1) !== layout.schema.id) throw badRequest(`A HybridRow row is not of schema ${layout.schema.id}.`);
  const start = cursor.at;
  const row = cursor.take(fixedSize(layout));
  const present = (bit: number | undefined) => bit === undefined || (row[bit >> 3] & (1 << (bit & 7))) !== 0;
  const values: RowValues = {};
  for (const { field, bit, offset } of layout.fixed) {
    if (present(bit)) values[field.path] = readScalar(new Cursor(bytes, start + offset), field.type);
  }
  for (const { field, bit } of layout.variable) {
    if (present(bit)) values[field.path] = readScalar(cursor, field.type);
  }
  while (cursor.at < bytes.length) {
    const code = cursor.take(1)[0];
    const type = TYPE_OF_CODE.get(code);
    const path = layout.pathOfToken[cursor.varuint()];
    const field = path === undefined ? undefined : layout.sparse.get(path);
    if (!type || !field || field.type !== type) throw badRequest("The HybridRow payload has a sparse field this server does not know.");
    values[path] = type === "bool" ? code === CODE.bool : readScalar(cursor, type);
  }
  return values;
}

function varuint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function writeScalar(type: FieldType, value: boolean | number | string | Buffer): Buffer {
  const fixed = Buffer.alloc(FIXED_BYTES[type] ?? 0);
  switch (type) {
    case "bool":
      return Buffer.alloc(0);
    case "int32":
      fixed.writeInt32LE(value as number, 0);
      return fixed;
    case "uint32":
      fixed.writeUInt32LE(value as number, 0);
      return fixed;
    case "float64":
      fixed.writeDoubleLE(value as number, 0);
      return fixed;
    case "utf8":
    case "binary": {
      const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : (value as Buffer);
      return Buffer.concat([varuint(bytes.length), bytes]);
    }
  }
}

/** One row of `layout`'s schema holding `values` (undefined ones left absent). */
export function writeRow(layout: Layout, values: Partial<RowValues>): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = VERSION_1;
  header.writeInt32LE(layout.schema.id, 1);
  const row = Buffer.alloc(fixedSize(layout));
  const setBit = (bit: number | undefined) => {
    if (bit !== undefined) row[bit >> 3] |= 1 << (bit & 7);
  };
  for (const { field, bit, offset } of layout.fixed) {
    const value = values[field.path];
    if (value === undefined) continue;
    setBit(bit);
    writeScalar(field.type, value).copy(row, offset);
  }
  const parts: Buffer[] = [header, row];
  for (const { field, bit } of layout.variable) {
    const value = values[field.path];
    if (value === undefined) continue;
    setBit(bit);
    parts.push(writeScalar(field.type, value));
  }
  for (const field of layout.sparse.values()) {
    const value = values[field.path];
    if (value === undefined) continue;
    const code = field.type === "bool" && value === false ? BOOL_FALSE : CODE[field.type];
    parts.push(Buffer.from([code]), varuint(layout.tokens.get(field.path)!), writeScalar(field.type, value));
  }
  return Buffer.concat(parts);
}

const SEGMENT = layoutOf({
  id: 2147473648,
  fields: [
    { path: "length", type: "int32", storage: "fixed" },
    { path: "comment", type: "utf8", storage: "sparse" },
    { path: "sdl", type: "utf8", storage: "sparse" },
  ],
});
const RECORD = layoutOf({
  id: 2147473649,
  fields: [
    { path: "length", type: "int32", storage: "fixed", nullable: false },
    { path: "crc32", type: "uint32", storage: "fixed", nullable: false },
  ],
});
const SEGMENT_MIN_BYTES = HEADER_BYTES + fixedSize(SEGMENT);
const RECORD_BYTES = HEADER_BYTES + fixedSize(RECORD);

/** Whether a body is HybridRow (a JSON text never starts with this byte). */
export const isHybridRow = (body: Buffer) => body[0] === VERSION_1;

/** The rows of a RecordIO stream, each checked against its CRC-32. */
export function readRecords(stream: Buffer): Buffer[] {
  const rows: Buffer[] = [];
  let at = 0;
  while (at < stream.length) {
    if (stream.length - at < HEADER_BYTES) throw badRequest("The HybridRow payload ends inside a header.");
    const schemaId = stream.readInt32LE(at + 1);
    if (schemaId === SEGMENT.schema.id) {
      const minimal = readRow(SEGMENT, stream.subarray(at, at + SEGMENT_MIN_BYTES));
      // The segment's length counts its own row only (its sparse comment too), not the records after it.
      const length = minimal.length as number | undefined;
      if (length === undefined || length < SEGMENT_MIN_BYTES) throw badRequest("The HybridRow payload has a segment without its length.");
      at += length;
    } else if (schemaId === RECORD.schema.id) {
      const record = readRow(RECORD, stream.subarray(at, at + RECORD_BYTES));
      at += RECORD_BYTES;
      const row = stream.subarray(at, at + (record.length as number));
      if (row.length !== record.length || crc32(row) !== record.crc32) throw badRequest("A HybridRow record is cut short or fails its CRC-32.");
      rows.push(row);
      at += row.length;
    } else {
      throw badRequest("The HybridRow payload is not a RecordIO stream.");
    }
  }
  return rows;
}

/** A RecordIO stream of one segment holding `rows`. */
export function writeRecords(rows: Buffer[]): Buffer {
  const parts: Buffer[] = [writeRow(SEGMENT, { length: SEGMENT_MIN_BYTES })];
  for (const row of rows) parts.push(writeRow(RECORD, { length: row.length, crc32: crc32(row) }), row);
  return Buffer.concat(parts);
}
