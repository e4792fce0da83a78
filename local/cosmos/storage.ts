import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";

/**
 * Durability for the embedded server: an append-only journal, one line per committed change,
 * each line `<crc32 hex>\t<json>`. A line is written (to the operating system, before the
 * reply is sent) for every acknowledged write, so a `kill -9` loses nothing acknowledged; a
 * torn last line fails its checksum and is cut off on the next start. When the journal grows,
 * the whole state is written as a snapshot in the same line format (a temporary file renamed
 * into place) and the journal starts over. A lock file keeps a second process out.
 */
export type JournalRecord = { [key: string]: unknown };

const SNAPSHOT = "snapshot.jsonl";
const JOURNAL = "journal.jsonl";
const LOCK = "LOCK";

const line = (record: JournalRecord) => {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, "0")}\t${json}\n`;
};

/**
 * Calls `apply` with each record of one file, in order, without holding them all; stops at the
 * first torn or corrupt line and returns where the good part ends.
 */
function replay(path: string, apply: (record: JournalRecord) => void): number {
  if (!existsSync(path)) return 0;
  const text = readFileSync(path);
  let offset = 0;
  while (offset < text.length) {
    const end = text.indexOf(10, offset);
    if (end < 0) break; // a last line without its newline was cut off mid-write
    const tab = text.indexOf(9, offset);
    const json = tab > offset && tab < end ? text.toString("utf8", tab + 1, end) : undefined;
    if (json === undefined || crc32(json).toString(16).padStart(8, "0") !== text.toString("utf8", offset, tab)) break;
    apply(JSON.parse(json) as JournalRecord);
    offset = end + 1;
  }
  return offset;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class DataDirectory {
  private journal: number;
  private journalBytes: number;
  private closed = false;

  private constructor(
    readonly path: string,
    journal: number,
    journalBytes: number,
    private readonly snapshotBytes: number,
    private readonly compactAfterBytes: number,
  ) {
    this.journal = journal;
    this.journalBytes = journalBytes;
  }

  /**
   * Takes the directory (refusing if another live process holds it) and hands `apply` every
   * record it holds: the snapshot's, then the journal's. A torn tail is cut off here.
   */
  static open(path: string, apply: (record: JournalRecord) => void, options: { compactAfterBytes?: number } = {}): DataDirectory {
    mkdirSync(path, { recursive: true });
    const lock = join(path, LOCK);
    if (existsSync(lock)) {
      const holder = Number(readFileSync(lock, "utf8"));
      if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
        throw new Error(`The data directory ${path} is in use by another process (pid ${holder}). Stop it, or use another --data-dir.`);
      }
    }
    writeFileSync(lock, String(process.pid));
    replay(join(path, SNAPSHOT), apply);
    const journalPath = join(path, JOURNAL);
    const validBytes = replay(journalPath, apply);
    const fd = openSync(journalPath, existsSync(journalPath) ? "r+" : "w+");
    ftruncateSync(fd, validBytes);
    const snapshotBytes = existsSync(join(path, SNAPSHOT)) ? fstatSize(join(path, SNAPSHOT)) : 0;
    return new DataDirectory(path, fd, validBytes, snapshotBytes, options.compactAfterBytes ?? 64 * 1024 * 1024);
  }

  /** Appends one record; returns once the operating system has it (what survives a killed process). */
  append(record: JournalRecord): void {
    if (this.closed) return;
    const bytes = Buffer.from(line(record));
    writeSync(this.journal, bytes, 0, bytes.length, this.journalBytes);
    this.journalBytes += bytes.length;
  }

  /** Whether the journal has grown enough that a snapshot pays for itself. */
  get wantsCompaction(): boolean {
    return this.journalBytes > Math.max(this.compactAfterBytes, 2 * this.snapshotBytes);
  }

  /** Writes `records` (the whole state) as the new snapshot, then empties the journal. */
  compact(records: Iterable<JournalRecord>): void {
    const temporary = join(this.path, `${SNAPSHOT}.tmp`);
    const fd = openSync(temporary, "w");
    let chunk: string[] = [];
    let size = 0;
    const flush = () => {
      writeSync(fd, chunk.join(""));
      chunk = [];
      size = 0;
    };
    for (const record of records) {
      const text = line(record);
      chunk.push(text);
      size += text.length;
      if (size > 1024 * 1024) flush();
    }
    flush();
    closeSync(fd);
    renameSync(temporary, join(this.path, SNAPSHOT));
    ftruncateSync(this.journal, 0);
    this.journalBytes = 0;
    Object.assign(this, { snapshotBytes: fstatSize(join(this.path, SNAPSHOT)) });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.journal);
    rmSync(join(this.path, LOCK), { force: true });
  }
}

function fstatSize(path: string): number {
  const fd = openSync(path, "r");
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

