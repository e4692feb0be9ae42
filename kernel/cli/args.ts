import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { kernelVersion } from '../version.js';

/** Thrown by a subcommand to end with one line on stderr and an exit code (2: bad usage, 1: failure). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
}
type Options = Record<string, OptionSpec>;
/** The parsed flags, typed by their specs (a string, a list of strings, or a boolean). */
export type ValuesOf<O extends Options> = { [K in keyof O]?: O[K]['multiple'] extends true ? string[] : O[K]['type'] extends 'string' ? string : boolean };

export interface Parsed<O extends Options> {
  /** What to print before exiting 0 (`--help`, `--version`), when one was asked. */
  done: string | undefined;
  values: ValuesOf<O>;
  positionals: string[];
}

/** The flags every subcommand understands. */
const COMMON: Options = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

/**
 * Parse one subcommand's flags: `--help` prints its usage and `--version` the kernel's
 * version (both exit 0, answered as `done`); an unknown flag is a usage error (exit 2).
 */
export function parseCommand<O extends Options>(argv: string[], usage: string, options: O, allowPositionals = false): Parsed<O> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON, ...options } as ParseArgsConfig['options'], strict: true, allowPositionals });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`, 2);
  }
  const values = parsed.values as ValuesOf<O> & { help?: boolean; version?: boolean };
  const done = values.help ? `${usage}\n` : values.version ? `${kernelVersion()}\n` : undefined;
  return { done, values, positionals: parsed.positionals };
}

/** A flag every data subcommand needs. */
export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value === '') throw new CliError(`${flag} is required\n${usage}`, 2);
  return value;
}

/**
 * A file named on the command line, made absolute before the application boots ('-', standard
 * input or output, stays): while a filebase stream loads, the working directory is its folder for
 * a few milliseconds at a time (plugins/sources/filebase/folder-reads.ts), and a relative name
 * opened then would resolve there.
 */
export function absoluteFile(name: string): string {
  return name === '-' ? name : path.resolve(name);
}
