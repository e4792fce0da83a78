import { parseArgs } from "node:util";

/** One flag: its type, default and what it does, as `--help` shows it. */
export interface Flag {
  type: "string" | "boolean";
  default?: string | boolean;
  /** A value's name in the usage (`--port <port>`). */
  value?: string;
  description: string;
}

/** What a command is, as `--help` tells it. */
export interface Command<F extends Record<string, Flag>> {
  /** How it is run: `npm run bench`. */
  name: string;
  /** One line: what it does. */
  summary: string;
  /** The positionals, as the usage line shows them (`<userId>`); none when absent. */
  positionals?: string;
  flags: F;
  examples: readonly string[];
}

/** A command's description, its flags' types kept as written (so `values` is typed by them). */
export const defineCommand = <const F extends Record<string, Flag>>(command: Command<F>): Command<F> => command;

type Values<F extends Record<string, Flag>> = {
  [K in keyof F]: F[K]["type"] extends "boolean" ? boolean : F[K] extends { default: string } ? string : string | undefined;
};

/** The text `--help` prints: usage, flags with their defaults, examples. */
export function usage<F extends Record<string, Flag>>(command: Command<F>): string {
  const flags = Object.entries(command.flags).map(([name, flag]) => {
    const spelled = flag.type === "string" ? `--${name} <${flag.value ?? "value"}>` : `--${name}`;
    const fallback = flag.default === undefined || flag.default === false ? "" : ` (default: ${String(flag.default)})`;
    return `  ${spelled.padEnd(30)} ${flag.description}${fallback}`;
  });
  return [
    `${command.summary}`,
    "",
    `usage: ${command.name}${command.positionals || Object.keys(command.flags).length ? " --" : ""}${command.positionals ? ` ${command.positionals}` : ""}${flags.length ? " [flags]" : ""}`,
    "",
    "flags:",
    ...flags,
    `  ${"--help".padEnd(30)} this text`,
    "",
    "examples:",
    ...command.examples.map((example) => `  ${example}`),
  ].join("\n");
}

/**
 * The command line, read as `node:util`'s parseArgs reads it (strict): `--help` prints the usage
 * and exits 0; an unknown flag, or a flag without its value, prints what was wrong and the usage,
 * and exits 2, with no stack trace.
 */
export function commandLine<F extends Record<string, Flag>>(command: Command<F>, args = process.argv.slice(2)): { values: Values<F>; positionals: string[] } {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage(command));
    process.exit(0);
  }
  const options = Object.fromEntries(
    Object.entries(command.flags).map(([name, flag]) => [name, flag.default === undefined ? { type: flag.type } : { type: flag.type, default: flag.default }]),
  ) as Parameters<typeof parseArgs>[0] extends infer C ? (C extends { options?: infer O } ? O : never) : never;
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: command.positionals !== undefined, strict: true });
    return { values: values as Values<F>, positionals };
  } catch (error) {
    console.error(`${command.name}: ${(error as Error).message}\n\n${usage(command)}`);
    process.exit(2);
  }
}

/** Refuses a bad value the way an unknown flag is refused: what was wrong, the usage, exit 2. */
export function refuse<F extends Record<string, Flag>>(command: Command<F>, message: string): never {
  console.error(`${command.name}: ${message}\n\n${usage(command)}`);
  process.exit(2);
}
