import type { IncomingMessage } from "node:http";

/** Beyond this a request body is refused before anything reads it (the API's handlers enforce 64 KiB themselves). */
const MAX_BODY_BYTES = 1024 * 1024;

/** A request's body, or undefined once it runs past `maxBytes`: every route of the local host reads bodies through this bound. */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
