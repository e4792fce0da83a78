import { crc32 } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationHeaders } from "../../src/protocol/auth";
import { readBatchOperations } from "../../src/wire/batch-rows";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/**
 * The .NET SDK's transactional batch format. test/dotnet runs the SDK itself against the server
 * (batches, rollbacks, bulk of 1,000); this suite pins the reading of bytes the SDK sent, and
 * that bytes it would never send are a 400, never a crash.
 */

/** A batch as Microsoft.Azure.Cosmos 3.64 sent it: create, upsert, replace with If-Match, read, patch, delete. */
const SDK_BATCH = Buffer.from(
  "81f0d8ff7f010a00000081f1d8ff7f36000000dfd3ec61817054e17f430000000002000000277b226964223a226e6577222c22706b223a2270222c226e223a332c2274657874223a6e756c6c7d81f1d8ff7f3b0000009121b30c817054e17f4314000000020000002c7b226964223a227570736572746564222c22706b223a2270222c226e223a342c2274657874223a6e756c6c7d81f1d8ff7f64000000efcf39a5817054e17f530500000002000000046b657074277b226964223a226b657074222c22706b223a2270222c226e223a352c2274657874223a2279227d1409262230303030303030342d366465332d303030302d303030302d3031613231316234666633332281f1d8ff7f130000001aa11985817054e17f130200000002000000046b65707481f1d8ff7f4800000086ac93aa817054e17f530100000002000000036e6577357b226f7065726174696f6e73223a5b7b226f70223a22696e6372222c2270617468223a222f6e222c2276616c7565223a31307d5d7d81f1d8ff7f13000000845b4cdc817054e17f13040000000200000004676f6e65",
  "hex",
);

describe("HybridRow batch operations", () => {
  it("reads a batch the .NET SDK sent into the operations the JavaScript SDK would send", () => {
    const operations = readBatchOperations(SDK_BATCH);
    expect(operations.map((o) => o.operationType)).toEqual(["Create", "Upsert", "Replace", "Read", "Patch", "Delete"]);
    expect(operations[0].resourceBody).toEqual({ id: "new", pk: "p", n: 3, text: null });
    expect(operations[2]).toMatchObject({ id: "kept", ifMatch: '"00000004-6de3-0000-0000-01a211b4ff33"' });
    expect(operations[4]).toMatchObject({ id: "new", resourceBody: { operations: [{ op: "incr", path: "/n", value: 10 }] } });
    expect(operations[5]).toEqual({ operationType: "Delete", id: "gone" });
  });
});

describe("hostile HybridRow bodies", () => {
  let f: CosmosFixture;
  let collection: string;
  beforeAll(async () => {
    f = await cosmosFixture();
    collection = (await f.container()).id;
  });
  afterAll(() => f.stop());

  const send = (body: Buffer, atomic = true) => {
    const url = new URL(`dbs/test/colls/${collection}/docs`, f.cosmos.endpoint);
    const headers: Record<string, string> = {
      ...authorizationHeaders(f.cosmos.key, "POST", url.pathname),
      "x-ms-cosmos-is-batch-request": "True",
      "x-ms-cosmos-batch-atomic": atomic ? "True" : "False",
      ...(atomic ? { "x-ms-documentdb-partitionkey": '["p"]' } : { "x-ms-documentdb-partitionkeyrangeid": "0" }),
    };
    return fetch(url, { method: "POST", headers, body });
  };
  // The first record's row starts after the 10-byte segment and the 13-byte record header.
  const withRow = (edit: (row: Buffer) => void, fixCrc = true) => {
    const bytes = Buffer.from(SDK_BATCH);
    const length = bytes.readInt32LE(15);
    const row = bytes.subarray(23, 23 + length);
    edit(row);
    if (fixCrc) bytes.writeUInt32LE(crc32(row), 19);
    return bytes;
  };

  it.each([
    ["cut short", SDK_BATCH.subarray(0, 100)],
    ["a record whose CRC-32 fails", withRow((row) => (row[20] ^= 1), false)],
    ["a row of another schema", withRow((row) => row.writeInt32LE(12345, 1))],
    ["a field length past the end", withRow((row) => (row[14] = 0x7f))],
    ["a resource body that is not JSON", withRow((row) => row.write("}", 15))],
    ["a sparse field of an unknown type", Buffer.concat([SDK_BATCH, Buffer.from([0x81, 0xf1, 0xd8, 0xff, 0x7f, 1, 0, 0, 0]), Buffer.alloc(4)])],
    ["only the version byte", Buffer.from([0x81])],
  ])("answers %s with 400", async (_name, body) => {
    for (const atomic of [true, false]) {
      const response = await send(body, atomic);
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("BadRequest");
    }
  });
});
