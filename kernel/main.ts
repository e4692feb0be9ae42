import './container.js';
import { parseArgs } from 'node:util';
import { loadConfigFile, type ConfigOverrides } from './config.js';
import { ConfigError, PluginTimeoutError, pluginOfError } from './errors.js';
import { FolderLockedError } from './tools/folder-lock.js';
import { Kernel } from './kernel.js';
import { createLogger } from './logger.js';
import { kernelVersion } from './version.js';

const USAGE = `Usage: streams serve --config <file> [--port N] [--host H] [--log-level L] [--transport T]
                     [--data DIR] [--fallback-port] [--pretty]
       (node kernel/boot.js takes the same flags)

  --config, -c   configuration file (JSON); its folder is the application root
  --port, -p     port to listen on (0 picks a free port)
  --host         address to bind (default from the config, else 127.0.0.1)
  --log-level    fatal | error | warn | info | debug | trace | silent
  --transport    auto | uws | node (default from the config, else auto: native
                 uWebSockets.js when a binary loads for this Node, else node:http)
  --data DIR     serve a working copy of the application's streams/ from DIR (copied at
                 the first boot): writes never touch the application's own files
  --fallback-port  when the port is taken, listen on a free one (the url line says which)
  --pretty       human-readable log lines (the default on a terminal; JSON lines otherwise)
  --json         JSON log lines even on a terminal
  --version      the kernel's version
  --help, -h     this text`;

function fail(message: string): never {
  process.stderr.write(`streams-kernel: ${message}\n`);
  process.exit(1);
}

function parseCli(argv: string[]): { config: string; overrides: ConfigOverrides; pretty: boolean | undefined } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        'log-level': { type: 'string' },
        transport: { type: 'string' },
        data: { type: 'string' },
        'fallback-port': { type: 'boolean' },
        pretty: { type: 'boolean' },
        json: { type: 'boolean' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.version) {
    process.stdout.write(`${kernelVersion()}\n`);
    process.exit(0);
  }
  if (!values.config) fail(`--config <file> is required\n${USAGE}`);
  const overrides: ConfigOverrides = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535, got "${values.port}"`);
    overrides.port = port;
  }
  if (values.host !== undefined) overrides.host = values.host;
  if (values['log-level'] !== undefined) overrides.logLevel = values['log-level'] as ConfigOverrides['logLevel'];
  if (values.data !== undefined) {
    if (values.data.trim() === '') fail('--data needs a folder');
    overrides.data = values.data;
  }
  if (values['fallback-port']) overrides.portFallback = true;
  if (values.transport !== undefined) {
    if (!['auto', 'uws', 'node'].includes(values.transport)) fail(`--transport must be auto, uws or node, got "${values.transport}"`);
    overrides.transport = values.transport as ConfigOverrides['transport'];
  }
  return { config: values.config, overrides, pretty: values.json ? false : values.pretty ? true : undefined };
}

/** The process entry point: boot the kernel from a config file and stop cleanly on signals. */
export async function main(argv: string[]): Promise<Kernel> {
  const { config: file, overrides, pretty } = parseCli(argv);
  let kernel: Kernel;
  try {
    const config = loadConfigFile(file, overrides);
    kernel = new Kernel(config, { logger: createLogger(config.log.level, { pretty }) });
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  // Signal handlers go in before boot: the url line is printed while booting, and a
  // supervisor may answer it with SIGTERM at once (default handling would kill us).
  let booted: Promise<void> = Promise.resolve();
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    kernel.logger.info({ signal }, 'shutting down');
    booted
      .catch(() => undefined)
      .then(() => kernel.shutdown())
      .then(() => {
        kernel.logger.flush?.();
        process.exit(0);
      })
      .catch((error: unknown) => {
        kernel.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  // A promise some plugin forgot to handle must not take every stream down with it (Node's
  // default exits): log what is known (the plugin, when a hook listener threw it) and serve on.
  // Plugins run their background work through `context.background`, so this is the last net.
  process.on('unhandledRejection', (reason) => {
    kernel.logger.error({ err: reason, error_plugin: pluginOfError(reason) }, 'unhandled promise rejection (a bug: the node keeps serving)');
  });
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  booted = kernel.boot();
  try {
    await booted;
  } catch (error) {
    if (error instanceof FolderLockedError) fail(lockedMessage(error));
    if (error instanceof ConfigError || error instanceof PluginTimeoutError) fail(error.message);
    process.stderr.write(`streams-kernel: boot failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  }
  return kernel;
}

/** One line: the folder, who holds it, and what to do (under `npm start`, in npm's words). */
function lockedMessage(error: FolderLockedError): string {
  const stop = error.holder ? `stop the other server (pid ${error.holder.pid})` : 'stop the other server';
  const hint = process.env.npm_lifecycle_event === 'start' ? `${stop}, or give this one its own folder: npm start -- --data DIR` : `${stop}, or serve another folder (--data DIR)`;
  return `${error.message}: ${hint}`;
}
