import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Builds a folder beside `target` and puts it in place whole: whoever reads `target` (azd zipping
 * it, a host loading it) sees the old folder or the new one, never one half written or emptied.
 */
export async function replaceFolder(target: string, fill: (folder: string) => void | Promise<void>): Promise<void> {
  const next = `${target}.next-${process.pid}`;
  const previous = `${target}.previous-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  try {
    await fill(next);
  } catch (error) {
    rmSync(next, { recursive: true, force: true });
    throw error;
  }
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(target)) renameSync(target, previous);
  renameSync(next, target);
  rmSync(previous, { recursive: true, force: true });
}
