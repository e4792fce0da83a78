import {
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import type { JournalRecord } from "../engine/account";
import { join } from "node:path";
import { crc32 } from "node:zlib";

/**
 * Durability for the embedded server: an append-only journal, one line per committed change,
 * each line `<crc32 hex>\t<json>`. A line is written (to the operating system, before the
 * reply is sent) for every acknowledged write, so a `kill -9` loses nothing acknowledged; a
 * torn last line fails its checksum and is cut off on the next start. Any other line that fails
 * it is damage, not a crash: the start stops, naming the file and offset, and changes nothing
 * (unless asked to recover: then the file is moved aside and its valid part before the damage
 * loaded). When the journal grows,
 * the whole state is written as a snapshot in the same line format (a temporary file renamed
 * into place) and the journal starts over. A lock file keeps a second process out.
 */

const SNAPSHOT = "snapshot.jsonl";
const JOURNAL = "journal.jsonl";
const LOCK = "LOCK";

const line = (record: JournalRecord) => {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, "0")}\t${json}\n`;
};

/** Where one file's good part ends, and whether what follows is damage (not a torn last line). */
interface Replayed {
  validBytes: number;
  damaged: boolean;
}

/** The record of one line, or undefined when the line fails its checksum or is no JSON object. */
function recordOf(text: Buffer, offset: number, end: number): JournalRecord | undefined {
  const tab = text.indexOf(9, offset);
  if (tab <= offset || tab >= end) return undefined;
  const json = text.toString("utf8", tab + 1, end);
  if (crc32(json).toString(16).padStart(8, "0") !== text.toString("utf8", offset, tab)) return undefined;
  try {
    return JSON.parse(json) as JournalRecord;
  } catch {
    return undefined;
  }
}

/**
 * Calls `apply` with each record of one file, in order; stops at the first bad line. A bad line
 * that is the file's last (`lastMayBeTorn`: the journal, appended to) is a write a crash cut
 * short; one before it is damage.
 */
function replay(path: string, apply: (record: JournalRecord) => void, lastMayBeTorn: boolean): Replayed {
  if (!existsSync(path)) return { validBytes: 0, damaged: false };
  const text = readFileSync(path);
  let offset = 0;
  while (offset < text.length) {
    const newline = text.indexOf(10, offset);
    const end = newline < 0 ? text.length : newline;
    const record = newline < 0 ? undefined : recordOf(text, offset, end);
    if (!record) return { validBytes: offset, damaged: !(lastMayBeTorn && end >= text.length - 1) };
    apply(record);
    offset = end + 1;
  }
  return { validBytes: offset, damaged: false };
}

/** A data file damaged before its end: what it is, where, and what the user can do. */
export class DamagedDataError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
  ) {
    super(
      `${file} is damaged at byte ${offset} (not a write cut short by a crash: valid lines follow or it is the snapshot). Nothing was changed. ` +
        `Restore it from a backup, or start with --recover-data to move it aside and load only what comes before byte ${offset}.`,
    );
  }
}

/** Keeps a damaged file as it is, beside the data, under a name that says so. */
function setAsideDamaged(file: string): string {
  const aside = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  copyFileSync(file, aside);
  return aside;
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
   * record it holds: the snapshot's, then the journal's. A torn tail is cut off here; damage
   * throws DamagedDataError, unless `recoverDamaged` (then the damaged file is copied aside,
   * `onRecovered` told, and only its part before the damage is kept).
   */
  static open(
    path: string,
    apply: (record: JournalRecord) => void,
    options: { compactAfterBytes?: number; recoverDamaged?: boolean; onRecovered?: (file: string, offset: number, aside: string) => void } = {},
  ): DataDirectory {
    mkdirSync(path, { recursive: true });
    const lock = join(path, LOCK);
    if (existsSync(lock)) {
      const holder = Number(readFileSync(lock, "utf8"));
      if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
        throw new Error(`The data directory ${path} is in use by another process (pid ${holder}). Stop it, or use another --data-dir.`);
      }
    }
    // Checked before the lock is taken or anything is written: a damaged directory stays as it is.
    const checked = (file: string, lastMayBeTorn: boolean): number => {
      const { validBytes, damaged } = replay(file, apply, lastMayBeTorn);
      if (!damaged) return validBytes;
      if (!options.recoverDamaged) throw new DamagedDataError(file, validBytes);
      const aside = setAsideDamaged(file);
      options.onRecovered?.(file, validBytes, aside);
      return validBytes;
    };
    const snapshotPath = join(path, SNAPSHOT);
    const snapshotValid = checked(snapshotPath, false);
    const journalPath = join(path, JOURNAL);
    const validBytes = checked(journalPath, true);
    writeFileSync(lock, String(process.pid));
    if (existsSync(snapshotPath) && snapshotValid < fstatSize(snapshotPath)) truncateFile(snapshotPath, snapshotValid);
    const fd = openSync(journalPath, existsSync(journalPath) ? "r+" : "w+");
    ftruncateSync(fd, validBytes);
    const snapshotBytes = existsSync(snapshotPath) ? fstatSize(snapshotPath) : 0;
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

function truncateFile(path: string, bytes: number): void {
  const fd = openSync(path, "r+");
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
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
